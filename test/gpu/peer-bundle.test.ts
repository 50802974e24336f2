import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import type { PeerComparison } from '../../bench/gpu/peer/compare';
import type { PeerRecord } from '../../bench/gpu/peer/llama-peer';
import { bareTools, run } from './support';

const dir = mkdtempSync(join(tmpdir(), 'memagent-peer-bundle-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const LIBRARY = fileURLToPath(new URL('../../../shared/fixtures/webllm/Qwen2-0.5B-Instruct-q4f32_1-ctx4k_cs1k-webgpu.wasm', import.meta.url));

describe('npm run bench:gpu:peer-bundle', () => {
  it('writes one folder of at most 60 MiB that runs llama.cpp from a bare copy and compares it with a WebLLM record', async () => {
    const built = join(dir, 'built');
    const bundle = await run('npm', ['run', '-s', 'bench:gpu:peer-bundle', '--', '--out', built]);
    console.log(`npm run bench:gpu:peer-bundle: ${bundle.seconds.toFixed(0)} s\n${bundle.stdout}`);
    expect(bundle.code, bundle.stderr).toBe(0);
    const files = readdirSync(built).sort();
    expect(files).toEqual(
      expect.arrayContaining(['run.sh', 'launch.mjs', 'manifest.json', 'peer.mjs.br', 'node_modules.pack.br', 'tokenizer.json.br', 'node.xz', 'node.version']),
    );
    const manifest = JSON.parse(readFileSync(join(built, 'manifest.json'), 'utf8')) as { nodeLlamaCpp: string; binaries: string[] };
    expect(manifest.nodeLlamaCpp).toBe('3.21.1');
    expect(manifest.binaries).toEqual(['@node-llama-cpp/linux-x64-vulkan', '@node-llama-cpp/linux-x64']);
    expect(files.reduce((n, f) => n + statSync(join(built, f)).size, 0)).toBeLessThanOrEqual(60 * 1024 * 1024);

    // A bare machine: the folder alone, somewhere no node_modules can be found, and no node on the PATH.
    const bare = join(dir, 'bare');
    cpSync(built, join(bare, 'gpu-peer'), { recursive: true });
    for (let d = bare; d !== dirname(d); d = dirname(d)) expect(existsSync(join(d, 'node_modules'))).toBe(false);
    // What the GPU bundle records of WebLLM's run, at the tiny size (figures of a SwiftShader run).
    const against = join(bare, 'webllm.json');
    writeFileSync(
      against,
      JSON.stringify({
        webllm: '0.2.79',
        library: { file: 'Qwen2-0.5B-Instruct-q4f32_1-ctx4k_cs1k-webgpu.wasm', sha256: createHash('sha256').update(readFileSync(LIBRARY)).digest('hex') },
        prompts: [{ promptTokens: 31, written: 2, prefillTokensPerSecond: 0.69, decodeTokensPerSecond: 0.07 }],
        step: { promptTokens: 28, written: 2, prefillTokensPerSecond: 0.52, decodeTokensPerSecond: 0.07, timeToFirstTokenSeconds: 54.2 },
      }),
    );
    const out = join(bare, 'record.json');
    const env = { PATH: bareTools(join(bare, 'bin')), HOME: bare, TMPDIR: bare };
    const peer = await run(
      join(bare, 'gpu-peer', 'run.sh'),
      ['--against', against, '--backend', 'cpu', '--threads', '1', '--cache-dir', join(bare, 'cache'), '--out', out],
      {
        cwd: bare,
        env,
      },
    );
    console.log(`run.sh from a bare copy: ${peer.seconds.toFixed(0)} s\n${peer.stdout}`);
    expect(peer.code, peer.stderr).toBe(0);
    expect(peer.stderr).toContain('Unpacking the node carried in this folder');
    const record = JSON.parse(readFileSync(out, 'utf8')) as { peer: PeerRecord; peerComparison: PeerComparison };
    expect(record.peer).toMatchObject({ backend: 'cpu', threads: 1, shape: { layers: 24, hidden: 896, vocab: 151936 } });
    expect(record.peer.step).toMatchObject({ promptTokens: 28, written: 2 });
    expect(record.peerComparison.requests.map((r) => [r.what, r.promptTokens])).toEqual([
      ['prompt', 31],
      ['step', 28],
    ]);
    for (const r of record.peerComparison.requests) expect(r.ratio.prefill).toBeGreaterThan(0);
    expect(peer.stdout).toContain('beside WebLLM 0.2.79');
  });
});
