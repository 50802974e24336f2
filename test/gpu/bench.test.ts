import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { BenchRecord } from '../../bench/gpu/bench';
import { expectMeasured, run, swiftShaderEnv } from './support';

const dir = mkdtempSync(join(tmpdir(), 'memagent-bench-gpu-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('npm run bench:gpu on SwiftShader (a few tokens)', () => {
  it('loads the real kernels from the cache the app’s downloader filled, measures load, prefill, decode, one step and speculative writing beside it, and writes its record', async () => {
    const out = join(dir, 'record.json');
    const cache = join(dir, 'cache');
    const bench = await run('npm', ['run', '-s', 'bench:gpu', '--', '--cache-dir', cache, '--out', out, '--speculate', 'oracle'], {
      env: { ...process.env, ...swiftShaderEnv() },
    });
    console.log(`npm run bench:gpu: ${bench.seconds.toFixed(0)} s\n${bench.stdout}`);
    expect(bench.code, bench.stderr).toBe(0);
    const record = JSON.parse(readFileSync(out, 'utf8')) as BenchRecord;
    expectMeasured(record, bench.stdout);
    // The plain reply as the draft: the same tokens in fewer passes than tokens.
    const oracle = record.speculation!.modes[0]!;
    expect(oracle.mode).toBe('oracle');
    expect(oracle.speculativeTokens).toEqual(record.speculation!.plainTokens);
    expect(record.speculation!.plainTokens.length).toBeGreaterThan(2);
    expect(oracle.passesPerToken).toBeLessThan(1);
    expect(record.speculation!.plain.passesPerToken).toBe(1);
    expect(record.speculation!.verifyCost.map((c) => c.k)).toEqual([1, 2, 4]);
    expect(bench.stdout).toMatch(/oracle\s+\d+ written in \d+ passes: 0\.\d+ passes per token/);
    // The made-up weights reached WebLLM through the folder the downloader filled: the model's files and the library.
    expect(record.cache.bytesWritten).toBeGreaterThan(record.library.weightBytes);
    expect(readdirSync(cache).map(decodeURIComponent)).toEqual(expect.arrayContaining(['webllm/config', 'webllm/model', 'webllm/wasm']));
  });
});
