import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { f16SafeScales, scaleFor } from '../src/engines/webllm/models/f16-safe';
import { libraryMetadata } from '../src/engines/webllm/models/library-metadata';
import { chatConfig, madeUpModel, SHARD_LIMIT, shardBytes, weightsIndex } from '../src/engines/webllm/models/made-up-model';
import { LIBRARY_PATH, TOKENIZER_PATH } from './support/synthetic-model';

const library = new Uint8Array(readFileSync(LIBRARY_PATH));

describe('a model made from its model library (for the GPU benchmark and the real-kernel tests)', () => {
  const meta = libraryMetadata(library);
  const index = weightsIndex(meta);

  it('reads the metadata the library carries: Qwen2 at q4f32_1, 267 parameters of 309,011,968 bytes', () => {
    expect(meta).toMatchObject({ model_type: 'qwen2', quantization: 'q4f32_1', prefill_chunk_size: 1024 });
    expect(meta.params).toHaveLength(267);
    expect(index.metadata.ParamBytes).toBe(309_011_968);
    expect(chatConfig(meta)).toMatchObject({ model_type: 'qwen2', quantization: 'q4f32_1', context_window_size: 32768 });
  });

  it('says so when the bytes are no model library', () => {
    expect(() => libraryMetadata(new TextEncoder().encode('\0asm not a library'))).toThrow(/no \{"model_type"/);
  });

  it('packs every parameter once, in order, into shards of at most 32 MB unless one parameter alone is larger', () => {
    const records = index.records.flatMap((s) => s.records);
    expect(records.map((r) => r.name)).toEqual(meta.params.map((p) => p.name));
    for (const shard of index.records) {
      expect(shard.nbytes <= SHARD_LIMIT || shard.records.length === 1).toBe(true);
      let offset = 0;
      for (const r of shard.records) {
        expect(r.byteOffset).toBe(offset);
        offset += r.nbytes;
      }
      expect(shard.nbytes).toBe(offset);
    }
    expect(index.records).toHaveLength(9);
  });

  it('fills a shard the same way every time: random codes, the f16-safe scale of each kind of weight, norm weights of 1, biases of 0', () => {
    const i = index.records.length - 1;
    const shard = index.records[i]!;
    const scales = f16SafeScales(meta);
    const bytes = shardBytes(shard, i, scales);
    expect(Buffer.from(bytes.buffer).equals(Buffer.from(shardBytes(shard, i, scales).buffer))).toBe(true);
    const at = (name: RegExp) => shard.records.find((r) => name.test(r.name))!;
    const floats = (r: { byteOffset: number; nbytes: number }) => new Float32Array(bytes.buffer, bytes.byteOffset + r.byteOffset, r.nbytes / 4);
    const scale = at(/q_scale$/);
    expect(new Set(floats(scale))).toEqual(new Set([Math.fround(scaleFor(scale.name, scales))]));
    expect(new Set(floats(at(/norm\.weight$/)))).toEqual(new Set([1]));
    expect(new Set(floats(at(/bias$/)))).toEqual(new Set([0]));
    const codes = new Uint32Array(bytes.buffer, bytes.byteOffset + at(/q_weight$/).byteOffset, 10_000);
    expect(new Set(codes).size).toBeGreaterThan(9_990);
  });

  it('makes half-float scales and norms for a q4f16_1 library: the scale and 1 as IEEE halves', () => {
    const shard = weightsIndex({
      ...meta,
      params: [
        { name: 'l.q_scale', shape: [4], dtype: 'float16' },
        { name: 'l.norm.weight', shape: [2], dtype: 'float16' },
      ],
    }).records[0]!;
    const halves = new Uint16Array(shardBytes(shard, 0, { embed: 0.02, qkv: 0.02, o: 0.02, gateUp: 0.02, down: 0.02, head: 0.02 }).buffer);
    expect([...halves]).toEqual([0x251f, 0x251f, 0x251f, 0x251f, 0x3c00, 0x3c00]);
  });

  it('serves every file WebLLM reads, under both names of the weights index, and nothing else', () => {
    const model = madeUpModel(library, { json: new Uint8Array(readFileSync(TOKENIZER_PATH)) });
    const parsed = (path: string) => JSON.parse(new TextDecoder().decode(model.file(path))) as unknown;
    expect(parsed('tensor-cache.json')).toEqual(index);
    expect(parsed('ndarray-cache.json')).toEqual(index);
    expect(parsed('mlc-chat-config.json')).toEqual(chatConfig(meta));
    expect(model.file('params_shard_8.bin')?.byteLength).toBe(index.records[8]!.nbytes);
    expect(model.file('params_shard_9.bin')).toBeUndefined();
    expect(model.file('tokenizer_config.json')).toBeUndefined();
  });

  it('a bare template adds nothing around the messages, and keeps the model’s stop tokens', () => {
    const bare = chatConfig(meta, { template: 'bare', stopEvery: 3 }).conv_template;
    const wrapped = [bare.system_template.replace('{system_message}', bare.system_message), bare.roles.user, bare.role_content_sep, ...bare.seps];
    expect(wrapped.concat(bare.roles.assistant, bare.role_empty_sep).join('')).toBe('');
    // WebLLM refuses a template without separators; an empty one is allowed.
    expect(bare.seps).toHaveLength(1);
    expect(bare.stop_token_ids).toEqual(chatConfig(meta, { stopEvery: 3 }).conv_template.stop_token_ids);
    expect(chatConfig(meta).conv_template.roles.user).toBe('<|im_start|>user');
  });

  it('a brief model stops its replies on every third token id besides the end-of-text tokens', () => {
    const stops = chatConfig(meta, { stopEvery: 3 }).conv_template.stop_token_ids;
    expect(stops.slice(0, 4)).toEqual([151643, 151645, 3, 6]);
    expect(stops.filter((id) => id % 3 === 0)).toHaveLength(Math.floor(151_935 / 3));
    expect(chatConfig(meta).conv_template.stop_token_ids).toEqual([151643, 151645]);
    expect(() => chatConfig(meta, { stopEvery: 1 })).toThrow(/at least 2/);
  });
});
