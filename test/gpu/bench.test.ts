import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { BenchRecord } from '../../bench/gpu/bench';
import type { CpuProfile } from '../../bench/gpu/cpu-profile';
import { expectMeasured, run, swiftShaderEnv } from './support';

const dir = mkdtempSync(join(tmpdir(), 'memagent-bench-gpu-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const out = join(dir, 'record.json');
const profile = join(dir, 'measured.cpuprofile');
let record: BenchRecord | undefined;

describe('npm run bench:gpu on SwiftShader (a few tokens)', () => {
  it('loads the real kernels from the cache the app’s downloader filled, measures load, prefill, decode, one step and speculative writing beside it, and writes its record', async () => {
    const cache = join(dir, 'cache');
    const bench = await run(
      'npm',
      ['run', '-s', 'bench:gpu', '--', '--cache-dir', cache, '--out', out, '--cpu-profile', profile, '--speculate', 'oracle', '--draft', '3'],
      {
        env: { ...process.env, ...swiftShaderEnv() },
      },
    );
    console.log(`npm run bench:gpu: ${bench.seconds.toFixed(0)} s\n${bench.stdout}`);
    expect(bench.code, bench.stderr).toBe(0);
    record = JSON.parse(readFileSync(out, 'utf8')) as BenchRecord;
    expectMeasured(record, bench.stdout);
    // The plain reply as the draft, three tokens a pass (a four-token reply is too short for the adaptive K to
    // gather evidence, which the unit tests show on a stand-in): the same tokens in fewer passes than tokens.
    const oracle = record.speculation!.modes[0]!;
    expect(oracle.mode).toBe('oracle');
    expect(oracle.draft).toEqual({ fixed: 3 });
    expect(oracle.speculativeTokens).toEqual(record.speculation!.plainTokens);
    expect(record.speculation!.plainTokens.length).toBeGreaterThan(2);
    expect(oracle.passesPerToken).toBeLessThan(1);
    expect(record.speculation!.plain.passesPerToken).toBe(1);
    expect(record.speculation!.verifyCost.map((c) => c.k)).toEqual([1, 2, 4]);
    expect(bench.stdout).toMatch(/oracle\s+\d+ written in \d+ passes: 0\.\d+ passes per token/);
    // The made-up weights reached WebLLM through the folder the downloader filled: the model's files and the library.
    expect(record.cache.bytesWritten).toBeGreaterThan(record.library.weightBytes);
    expect(readdirSync(cache).map(decodeURIComponent)).toEqual(expect.arrayContaining(['webllm/config', 'webllm/model', 'webllm/wasm']));
    expect(bench.stdout).toMatch(/first token [\d.]+ ms; decode [\d.]+ ms a token at the start, [\d.]+ at the end/);
  });

  it('records where each request’s time went: the first token, decode steps at the start and end, and that 0.2.79 offers no breakdown', () => {
    if (!record) throw new Error('The benchmark did not run.');
    for (const times of [...record.prompts.map((p) => p.times), record.step.times]) {
      expect(times?.firstTokenMs).toBeGreaterThan(0);
      expect(times?.breakdown).toEqual({ offered: false, note: 'WebLLM 0.2.79 offers no latency breakdown (0.2.86 does)' });
    }
    // The prompt series writes past any end: one decode step after the prefill's token, each timed.
    const prompt = record.prompts[0]!.times!;
    expect(prompt.decodeSteps).toBe(record.prompts[0]!.written - 1);
    expect(prompt.decodeStartMs).toBeGreaterThan(0);
    expect(prompt.decodeEndMs).toBeGreaterThan(0);
  });

  it('times every kernel of a decode token and a prefill chunk on the GPU where the adapter offers timestamp-query', (ctx) => {
    if (!record) throw new Error('The benchmark did not run.');
    if (!record.adapter.features.includes('timestamp-query')) {
      ctx.skip(`this adapter (${record.adapter.description || record.adapter.architecture}) offers no timestamp-query, so no kernel is timed`);
    }
    const gpu = record.prompts[0]!.times!.gpu!;
    expect(gpu.offered).toBe(true);
    for (const forward of [gpu.decode!, gpu.prefill!]) {
      expect(forward.passes).toBeGreaterThan(record.library.modelType === 'qwen2' ? 24 : 0); // at least one kernel per layer
      expect(forward.untimed).toBe(0);
      expect(forward.gpuMs).toBeGreaterThan(0);
      expect(forward.kernels.reduce((n, k) => n + k.dispatches, 0)).toBe(forward.passes);
      // Named by the shaders' entry points, largest first.
      expect(forward.kernels.every((k) => k.name !== 'unnamed')).toBe(true);
      expect(forward.kernels.map((k) => k.ms)).toEqual([...forward.kernels.map((k) => k.ms)].sort((a, b) => b - a));
    }
    expect(gpu.decode!.tokens).toBe(1);
    expect(gpu.prefill!.tokens).toBeGreaterThan(1);
    // The decode token's GPU work is part of its wall time.
    expect(gpu.decode!.wallMs).toBeGreaterThan(0);
  });

  it('writes a V8 CPU profile of the measured part in which the benchmark’s own functions appear', () => {
    const p = JSON.parse(readFileSync(profile, 'utf8')) as CpuProfile;
    expect(p.endTime).toBeGreaterThan(p.startTime);
    const ours = p.nodes.filter((n) => /bench\/gpu\/bench\.ts/.test(n.callFrame.url)).map((n) => n.callFrame.functionName);
    expect(ours).toEqual(expect.arrayContaining(['promptOf']));
    // The app's own code ran inside it too: the chunker cut the prompts.
    expect(p.nodes.some((n) => n.callFrame.functionName === 'chunkAll')).toBe(true);
  });
});
