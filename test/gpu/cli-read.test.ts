import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ModelHost, startModelHost } from '../support/model-host';
import { LIBRARY_FILE } from '../support/synthetic-model';
import { runCli } from '../support/cli';
import { swiftShaderEnv } from './support';

// The command line's WebLLM engine on SwiftShader: the model is the made-up 0.5B (real library, real kernels)
// whose replies end after a couple of tokens, downloaded from the stand-in model host by `memagent models download`;
// the read then runs with the host gone, from the cache folder alone. A one-sentence book makes one step and the
// answer: two requests of about 25 tokens each, minutes on a software GPU.

const dir = mkdtempSync(join(tmpdir(), 'memagent-cli-gpu-'));
const cache = join(dir, 'cache');
const NAME = `Made-up-0.5B-${Date.now().toString(36)}`;
let host: ModelHost;
let base: string;

beforeAll(async () => {
  host = await startModelHost(0);
  base = `http://127.0.0.1:${host.port}/synthetic-brief/${NAME}`;
});
afterAll(async () => {
  await host?.close().catch(() => undefined);
  rmSync(dir, { recursive: true, force: true });
});

const env = () => ({ ...swiftShaderEnv(), MEMAGENT_CACHE_DIR: cache });

describe('memagent read --engine webllm on SwiftShader', () => {
  it('downloads with the app’s downloader, then reads a book end to end offline on the real kernels, and lists and deletes the model', async () => {
    const model = ['--model', NAME, '--webllm', '0.2.79'];
    const download = await runCli(['models', 'download', ...model, '--model-url', `${base}/resolve/main/`, '--model-lib', `${base}/lib/${LIBRARY_FILE}`], {
      env: env(),
    });
    expect(download.code, download.stderr).toBe(0);
    expect(download.stderr).toMatch(/swiftshader/i);
    const log = (await (await fetch(`http://127.0.0.1:${host.port}/synthetic/${NAME}/__log`)).json()) as string[];
    // Every file once: 0.2.79's weights index and its nine shards, the configs, the tokenizer and the library.
    const shards = Array.from({ length: 9 }, (_, i) => `GET resolve/main/params_shard_${i}.bin`);
    expect(log.sort()).toEqual(
      [
        ...shards,
        'GET resolve/main/mlc-chat-config.json',
        'GET resolve/main/ndarray-cache.json',
        'GET resolve/main/tokenizer.json',
        'GET resolve/main/tokenizer_config.json',
        `GET lib/${LIBRARY_FILE}`,
      ].sort(),
    );
    const listed = await runCli(['models'], { env: env() });
    expect(listed.stdout).toContain(`custom:${NAME}`);
    expect(listed.stdout).toMatch(/294\.7 MB, downloaded; WebLLM 0\.2\.79/);

    await host.close(); // from here on, no model host: the read finds everything in the cache folder
    const book = join(dir, 'ada.txt');
    writeFileSync(book, 'Ada won the race.\n');
    const prompts = join(dir, 'tiny.json');
    writeFileSync(prompts, JSON.stringify({ update: '{problem}\n{memory}\n{section}', final: '{problem}\n{memory}' }));
    const out = join(dir, 'read.jsonl');
    const t0 = performance.now();
    const read = await runCli(
      [
        'read',
        book,
        '--question',
        'Who won?',
        '--engine',
        'webllm',
        ...model,
        '--prompts',
        prompts,
        '--memory',
        '64',
        '--seed',
        '7',
        // Speculative writing on real kernels is test/gpu/speculate.test.ts's: here, the read's requests alone.
        '--speculate',
        'off',
        '--out',
        out,
        '--progress',
        'lines',
      ],
      { env: env() },
    );
    console.log(`memagent read --engine webllm: ${((performance.now() - t0) / 1000).toFixed(0)} s\n${read.stderr}`);
    expect(read.code, read.stderr).toBe(0);
    expect(read.stderr).toMatch(/on google swiftshader.*\(WebLLM 0\.2\.79 through Dawn/);
    expect(read.stderr).toMatch(/loaded \(\d+-token context\)/);
    const lines = readFileSync(out, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines[0]).toMatchObject({ engine: { id: 'webllm', model: `custom:${NAME}` } });
    const revisions = lines.filter((l) => l.type === 'revision');
    expect(revisions.map((r) => r.index)).toEqual([0]);
    for (const r of [...revisions, lines.at(-1)!]) {
      // WebLLM's own count of the prompt: the chat template around a prompt of a few tokens.
      expect(r.promptTokens).toBeGreaterThan(10);
      expect(r.promptTokens).toBeLessThan(60);
      expect(r.completionTokens).toBeGreaterThanOrEqual(1);
      expect(r.completionTokens).toBeLessThanOrEqual(64);
    }
    console.log(`memories: ${JSON.stringify(revisions.map((r) => r.memory))}; written: ${JSON.stringify(lines.slice(1).map((l) => l.completionTokens))}`);
    expect(lines.at(-1)).toMatchObject({ type: 'answer' });

    const removed = await runCli(['models', 'delete', NAME], { env: env() });
    expect(removed.code, removed.stderr).toBe(0);
    expect((await runCli(['models'], { env: env() })).stdout).toMatch(/^No models in/);
    const left = readdirSync(join(cache, encodeURIComponent('webllm/model')));
    expect(left).toEqual([]);
    expect(existsSync(join(cache, 'models.json'))).toBe(true);
  });
});
