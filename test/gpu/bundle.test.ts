import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { BenchRecord } from '../../bench/gpu/bench';
import type { CpuProfile } from '../../bench/gpu/cpu-profile';
import { bareTools, expectMeasured, run, swiftShaderEnv } from './support';

// The GPU benchmark runs once in this file, as a GPU machine runs it: from the bundle's folder copied bare, on the node
// it carries. Each forward pass takes tens of seconds on SwiftShader, so that one run measures everything the tests
// below check: load from the cache the app's downloader filled, the prompt series, one step, the step asked two
// questions one after another (the step itself the first one's reply) and as one batch, and the CPU profile.

const dir = mkdtempSync(join(tmpdir(), 'memagent-bundle-gpu-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const bare = join(dir, 'bare');
const out = join(bare, 'record.json');
const profile = join(bare, 'measured.cpuprofile');
const cache = join(bare, 'cache');
let record: BenchRecord | undefined;
let stdout = '';

function measured(): BenchRecord {
  if (!record) throw new Error('The benchmark did not run.');
  return record;
}

describe('npm run bench:gpu:bundle, run from a bare copy on SwiftShader (a few tokens)', () => {
  it('writes one folder of at most 60 MiB that runs the benchmark from a bare copy with no node, npm or node_modules', async () => {
    const built = join(dir, 'built');
    const bundle = await run('npm', ['run', '-s', 'bench:gpu:bundle', '--', '--out', built]);
    console.log(`npm run bench:gpu:bundle: ${bundle.seconds.toFixed(0)} s\n${bundle.stdout}`);
    expect(bundle.code, bundle.stderr).toBe(0);
    const files = readdirSync(built).sort();
    expect(files).toEqual(
      expect.arrayContaining(['run.sh', 'launch.mjs', 'manifest.json', 'bench.mjs.br', 'dawn.node.br', 'tokenizer.json.br', 'node.xz', 'node.version']),
    );
    expect(files.some((f) => f.endsWith('.wasm.br'))).toBe(true);
    const bytes = files.reduce((n, f) => n + statSync(join(built, f)).size, 0);
    expect(bytes).toBeLessThanOrEqual(60 * 1024 * 1024);

    // A bare machine: the folder alone, somewhere no node_modules can be found, and no node on the PATH.
    cpSync(built, join(bare, 'gpu-bench'), { recursive: true });
    for (let d = bare; d !== dirname(d); d = dirname(d)) expect(existsSync(join(d, 'node_modules'))).toBe(false);
    const bin = bareTools(join(bare, 'bin'));
    const env = { PATH: bin, HOME: bare, TMPDIR: bare, ...swiftShaderEnv() };
    const args = ['--size', 'tiny', '--cache-dir', cache, '--out', out, '--cpu-profile', profile, '--questions', '2'];
    const bench = await run(join(bare, 'gpu-bench', 'run.sh'), args, { cwd: bare, env });
    console.log(`run.sh from a bare copy: ${bench.seconds.toFixed(0)} s\n${bench.stdout}`);
    expect(bench.code, bench.stderr).toBe(0);
    stdout = bench.stdout;
    // It ran on the node it carries, unpacked beside it.
    expect(bench.stderr).toContain('Unpacking the node carried in this folder');
    expect(existsSync(join(bare, 'gpu-bench', 'unpacked', 'node'))).toBe(true);
    record = JSON.parse(readFileSync(out, 'utf8')) as BenchRecord;
    expectMeasured(record, stdout);
    expect(record.node).toBe(readFileSync(join(built, 'node.version'), 'utf8').split(' ')[1]);
  });

  it('loads the real kernels from the cache the app’s downloader filled: the model’s files and the library', () => {
    const r = measured();
    expect(r.cache.bytesWritten).toBeGreaterThan(r.library.weightBytes);
    expect(readdirSync(cache).map(decodeURIComponent)).toEqual(expect.arrayContaining(['webllm/config', 'webllm/model', 'webllm/wasm']));
    expect(stdout).toMatch(/first token [\d.]+ ms; decode [\d.]+ ms a token at the start, [\d.]+ at the end/);
  });

  it('writes the step for two questions one after another and as one batch: the same tokens each way, in fewer passes batched', () => {
    const batch = measured().batch!;
    expect(batch).toMatchObject({ questions: 2, maxTokens: 2, same: true });
    expect(batch.batchedTokens).toEqual(batch.singleTokens);
    expect(batch.singleTokens.map((t) => t.length)).toEqual([2, 2]);
    // One by one: a prefill and a decode step each, the step's own counted for the first question. Batched: one prefill
    // for both, then one pass writing a token for each.
    expect(batch.single).toMatchObject({ passes: 4, written: 4 });
    expect(batch.batched).toMatchObject({ passes: 2, prefillPasses: 1, writePasses: 1, written: 4, tokensPerPass: 2 });
    expect(batch.speedup).toBeCloseTo(batch.single.seconds / batch.batched.seconds, 2);
    expect(stdout).toMatch(/batch [\d.]+× as fast as one by one; the same tokens for every question/);
  });

  it('records where each request’s time went: the first token, decode steps at the start and end, and that 0.2.79 offers no breakdown', () => {
    const r = measured();
    for (const times of [...r.prompts.map((p) => p.times), r.step.times]) {
      expect(times?.firstTokenMs).toBeGreaterThan(0);
      expect(times?.breakdown).toEqual({ offered: false, note: 'WebLLM 0.2.79 offers no latency breakdown (0.2.86 does)' });
    }
    // The prompt series writes past any end: one decode step after the prefill's token, each timed.
    const prompt = r.prompts[0]!.times!;
    expect(prompt.decodeSteps).toBe(r.prompts[0]!.written - 1);
    expect(prompt.decodeStartMs).toBeGreaterThan(0);
    expect(prompt.decodeEndMs).toBeGreaterThan(0);
  });

  it('times every kernel of a decode token and a prefill chunk on the GPU where the adapter offers timestamp-query', (ctx) => {
    const r = measured();
    if (!r.adapter.features.includes('timestamp-query')) {
      ctx.skip(`this adapter (${r.adapter.description || r.adapter.architecture}) offers no timestamp-query, so no kernel is timed`);
    }
    const gpu = r.prompts[0]!.times!.gpu!;
    expect(gpu.offered).toBe(true);
    for (const forward of [gpu.decode!, gpu.prefill!]) {
      expect(forward.passes).toBeGreaterThan(r.library.modelType === 'qwen2' ? 24 : 0); // at least one kernel per layer
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
    measured();
    const p = JSON.parse(readFileSync(profile, 'utf8')) as CpuProfile;
    expect(p.endTime).toBeGreaterThan(p.startTime);
    const ours = p.nodes.filter((n) => /bench\.mjs$/.test(n.callFrame.url)).map((n) => n.callFrame.functionName);
    expect(ours).toEqual(expect.arrayContaining(['promptOf']));
    // The app's own code ran inside it too: the chunker cut the prompts.
    expect(ours).toEqual(expect.arrayContaining(['chunkAll']));
  });
});
