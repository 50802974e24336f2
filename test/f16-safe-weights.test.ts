import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  ACTIVATION_LIMIT,
  activationBounds,
  boundShapes,
  F16_MAX,
  f16SafeScales,
  halfBits,
  halfValue,
  type MadeUpScales,
} from '../src/engines/webllm/models/f16-safe';
import { libraryMetadata, type LibraryMetadata } from '../src/engines/webllm/models/library-metadata';
import { LIBRARY_PATH } from './support/synthetic-model';

const FIXTURES = join(LIBRARY_PATH, '..');
const libraries = ['Qwen2-0.5B', 'Qwen2-1.5B', 'Qwen2-7B'].map((name) => ({
  name,
  meta: libraryMetadata(new Uint8Array(readFileSync(join(FIXTURES, `${name}-Instruct-q4f32_1-ctx4k_cs1k-webgpu.wasm`)))),
}));

/** The same library as its q4f16_1 build would be: the scales stored as halves. */
function asF16(meta: LibraryMetadata): LibraryMetadata {
  return {
    ...meta,
    quantization: 'q4f16_1',
    params: meta.params.map((p) => (p.dtype === 'float32' ? { ...p, dtype: 'float16' } : p)),
  };
}

describe('made-up weights whose activations stay far inside f16’s range', () => {
  it('reads the shapes the bound needs from each library: hidden size, attention and MLP widths, layers', () => {
    expect(boundShapes(libraries[2]!.meta)).toEqual({
      hidden: 3584,
      attention: 3584,
      intermediate: 18944,
      layers: 28,
      headDim: 128,
      ownHead: true,
      scaleDtype: 'float32',
    });
    expect(boundShapes(libraries[0]!.meta)).toMatchObject({ hidden: 896, intermediate: 4864, layers: 24, headDim: 64, ownHead: false });
  });

  for (const { name, meta } of libraries) {
    for (const build of [meta, asF16(meta)]) {
      it(`keeps every worst-case activation of ${name} ${build.params.some((p) => p.dtype === 'float16') ? 'q4f16' : 'q4f32'} at most ${ACTIVATION_LIMIT} (f16's largest ÷ 64), with no scale rounded to zero`, () => {
        const scales = f16SafeScales(build);
        const bounds = activationBounds(boundShapes(build), scales);
        for (const [what, bound] of Object.entries(bounds)) expect(bound, what).toBeLessThanOrEqual(ACTIVATION_LIMIT);
        for (const [kind, scale] of Object.entries(scales)) expect(scale, kind).toBeGreaterThan(0);
        // The logits still tell tokens apart: their bound is not crushed towards zero.
        expect(bounds.logits).toBeGreaterThan(100);
      });
    }
  }

  it('finds the old made-up weights (every scale 0.02) unsafe for the 7B: the bound passes f16’s largest value', () => {
    const old: MadeUpScales = { embed: 0.02, qkv: 0.02, o: 0.02, gateUp: 0.02, down: 0.02, head: 0.02 };
    const bounds = activationBounds(boundShapes(libraries[2]!.meta), old);
    expect(bounds.residual).toBeGreaterThan(F16_MAX);
  });

  it('writes halves exactly, subnormals included', () => {
    expect(halfBits(1)).toBe(0x3c00);
    expect(halfBits(0.02)).toBe(0x251f);
    expect(halfBits(65504)).toBe(0x7bff);
    expect(halfBits(2 ** -24)).toBe(1);
    expect(halfValue(halfBits(3e-6))).toBeCloseTo(3e-6, 7);
    for (const x of [1e-7, 2.5e-6, 3.4e-5, 0.02, 0.3, 1000]) expect(Math.abs(halfValue(halfBits(x)) - x) / x).toBeLessThan(0.3);
  });
});
