import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { chatConfig, LIBRARY_FILE, libraryMetadata, SHARD_LIMIT, shardBytes, weightsIndex } from './support/synthetic-model';

const library = readFileSync(new URL(`../../shared/fixtures/webllm/${LIBRARY_FILE}`, import.meta.url));

describe('a model made from its model library (for the real-kernel test)', () => {
  const meta = libraryMetadata(library);
  const index = weightsIndex(meta);

  it('reads the metadata the library carries: Qwen2 at q4f32_1, 267 parameters of 309,011,968 bytes', () => {
    expect(meta).toMatchObject({ model_type: 'qwen2', quantization: 'q4f32_1', prefill_chunk_size: 1024 });
    expect(meta.params).toHaveLength(267);
    expect(index.metadata.ParamBytes).toBe(309_011_968);
    expect(chatConfig(meta)).toMatchObject({ model_type: 'qwen2', quantization: 'q4f32_1', context_window_size: 32768 });
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

  it('fills a shard the same way every time: random codes, scales of 0.02, norm weights of 1, biases of 0', () => {
    const i = index.records.length - 1;
    const shard = index.records[i]!;
    const bytes = shardBytes(shard, i);
    expect(bytes.equals(shardBytes(shard, i))).toBe(true);
    const at = (name: RegExp) => shard.records.find((r) => name.test(r.name))!;
    const floats = (r: { byteOffset: number; nbytes: number }) => new Float32Array(bytes.buffer, bytes.byteOffset + r.byteOffset, r.nbytes / 4);
    expect(new Set(floats(at(/q_scale$/)))).toEqual(new Set([Math.fround(0.02)]));
    expect(new Set(floats(at(/norm\.weight$/)))).toEqual(new Set([1]));
    expect(new Set(floats(at(/bias$/)))).toEqual(new Set([0]));
    const codes = new Uint32Array(bytes.buffer, bytes.byteOffset + at(/q_weight$/).byteOffset, 10_000);
    expect(new Set(codes).size).toBeGreaterThan(9_990);
  });
});
