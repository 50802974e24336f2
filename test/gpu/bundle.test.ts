import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { BenchRecord } from '../../bench/gpu/bench';
import { bareTools, expectMeasured, run, swiftShaderEnv } from './support';

const dir = mkdtempSync(join(tmpdir(), 'memagent-bundle-gpu-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('npm run bench:gpu:bundle', () => {
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
    const bare = join(dir, 'bare');
    cpSync(built, join(bare, 'gpu-bench'), { recursive: true });
    for (let d = bare; d !== dirname(d); d = dirname(d)) expect(existsSync(join(d, 'node_modules'))).toBe(false);
    const bin = bareTools(join(bare, 'bin'));
    const out = join(bare, 'record.json');
    const env = { PATH: bin, HOME: bare, TMPDIR: bare, ...swiftShaderEnv() };
    const bench = await run(join(bare, 'gpu-bench', 'run.sh'), ['--size', 'tiny', '--cache-dir', join(bare, 'cache'), '--out', out], { cwd: bare, env });
    console.log(`run.sh from a bare copy: ${bench.seconds.toFixed(0)} s\n${bench.stdout}`);
    expect(bench.code, bench.stderr).toBe(0);
    // It ran on the node it carries, unpacked beside it.
    expect(bench.stderr).toContain('Unpacking the node carried in this folder');
    expect(existsSync(join(bare, 'gpu-bench', 'unpacked', 'node'))).toBe(true);
    const record = JSON.parse(readFileSync(out, 'utf8')) as BenchRecord;
    expectMeasured(record, bench.stdout);
    expect(record.node).toBe(readFileSync(join(built, 'node.version'), 'utf8').split(' ')[1]);
  });
});
