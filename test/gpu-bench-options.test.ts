import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { bytesPerDecodeStep, decodeLimit, deviceBandwidth } from '../bench/gpu/bandwidth';
import { benchSampling, BenchUsageError, parseBenchArgs, SHAPES, shapeOf } from '../bench/gpu/options';
import { libraryMetadata } from '../src/engines/webllm/models/library-metadata';
import { LIBRARY_PATH } from './support/synthetic-model';

const DEFAULTS = { library: 'lib.wasm', tokenizer: 'tokenizer.json', text: 'book.txt', cacheDir: '/cache', out: 'out.json' };

describe('the GPU benchmark’s sizes and options', () => {
  it('measures MemAgent’s step on a GPU by default, a few tokens on a software one, and takes each part from the flags', () => {
    expect(parseBenchArgs([], DEFAULTS)).toEqual({ size: 'auto', shape: {}, ...DEFAULTS });
    expect(SHAPES.paper).toMatchObject({ chunk: 5000, memory: 1024, write: 1024, prompts: [1000, 2000, 4000], templates: 'app' });
    const o = parseBenchArgs(['--size', 'paper', '--prompts', '1000, 8000', '--write', '256', '--bandwidth-gbps', '4800', '--library', 'x.wasm'], DEFAULTS);
    if (o === 'help') throw new Error('help');
    expect(o).toMatchObject({ size: 'paper', library: 'x.wasm', bandwidthGbps: 4800 });
    expect(shapeOf('paper', o.shape)).toEqual({ ...SHAPES.paper, prompts: [1000, 8000], write: 256 });
    expect(parseBenchArgs(['--help'], DEFAULTS)).toBe('help');
    // The suite: the app's drafts and the oracle beside the plain step, unless --speculate names other modes.
    expect(parseBenchArgs(['--suite'], DEFAULTS)).toMatchObject({ suite: true, speculate: 'ngram,oracle', shape: { prompts: [] } });
    expect(parseBenchArgs(['--suite', '--speculate', 'partial:0.3'], DEFAULTS)).toMatchObject({ suite: true, speculate: 'partial:0.3' });
    for (const wrong of [['--size', 'huge'], ['--chunk', '0'], ['--prompt-write', '1'], ['--templates', 'paper'], ['--bandwidth-gbps', '-1'], ['--what']]) {
      expect(() => parseBenchArgs(wrong, DEFAULTS)).toThrow(BenchUsageError);
    }
  });

  it('takes --temperature, --top-p and --seed in a read’s ranges, temperature 0, top-p 0.95 and seed 1 where not given', () => {
    const o = parseBenchArgs(['--temperature', '0.7', '--top-p', '0.95', '--seed', '7'], DEFAULTS);
    if (o === 'help') throw new Error('help');
    expect(o).toMatchObject({ temperature: 0.7, topP: 0.95, seed: 7 });
    expect(benchSampling(o)).toEqual({ temperature: 0.7, topP: 0.95, seed: 7 });
    const plain = parseBenchArgs([], DEFAULTS);
    if (plain === 'help') throw new Error('help');
    expect(plain).not.toHaveProperty('temperature');
    expect(benchSampling(plain)).toEqual({ temperature: 0, topP: 0.95, seed: 1 });
    expect(parseBenchArgs(['--seed', '0', '--top-p', '1', '--temperature', '2'], DEFAULTS)).toMatchObject({ seed: 0, topP: 1, temperature: 2 });
    for (const [flag, value, message] of [
      ['--temperature', '2.5', /--temperature must be from 0 to 2/],
      ['--temperature', 'warm', /--temperature must be a number/],
      ['--top-p', '0', /--top-p must be above 0 and at most 1/],
      ['--seed', '-1', /--seed must be a whole number/],
      ['--seed', '1.5', /--seed must be a whole number/],
      ['--seed', String(2 ** 31), /--seed must be a whole number from 0 to 2147483647/],
    ] as const) {
      expect(() => parseBenchArgs([`${flag}=${value}`], DEFAULTS)).toThrow(message);
    }
  });

  it('puts decode beside the limit memory bandwidth sets: every weight and the KV cache read once per token', () => {
    const meta = libraryMetadata(new Uint8Array(readFileSync(LIBRARY_PATH)));
    // Qwen2-0.5B at q4f32_1: 24 layers × K and V × 2 KV heads × 64 dims × 4 bytes a token.
    expect(bytesPerDecodeStep(meta, 1000)).toEqual({ weights: 309_011_968, kv: 24 * 2 * 2 * 64 * 4 * 1000 });
    const h200 = deviceBandwidth('NVIDIA H200 NVL', undefined)!;
    expect(h200).toEqual({ gbPerSecond: 4800, source: 'published figure for the NVIDIA H200' });
    expect(decodeLimit(meta, 1000, h200)).toBeCloseTo(4800e9 / (309_011_968 + 24_576_000), 6);
    expect(deviceBandwidth('NVIDIA H100 PCIe', undefined)?.gbPerSecond).toBe(2000);
    expect(deviceBandwidth('SwiftShader Device (Subzero)', undefined)).toBeUndefined();
    expect(deviceBandwidth('SwiftShader', 20)).toEqual({ gbPerSecond: 20, source: '--bandwidth-gbps' });
  });
});
