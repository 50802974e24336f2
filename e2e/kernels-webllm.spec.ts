import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, type Page, test } from '@playwright/test';
import { buildKernelsPage } from '../test/kernels/build';
import type { KernelsApi } from '../test/kernels/kernels.worker';
import { serveFiles } from '../test/support/serve-fixtures';
import { LIBRARY_FILE } from '../test/support/synthetic-model';

// Runs in the 'webgpu' project (SwiftShader). The app's WebLLM adapter — its engine class, downloader,
// tokenizer and memory loop, in a worker — drives a real MLCEngine: WebLLM 0.2.79 (the newest whose model
// libraries can be had here; the app ships 0.2.86), a real model library, and weights made from the
// library's own metadata (test/support/synthetic-model.ts). Real kernels are slow on a software adapter,
// so the test loads once and writes three tokens in all; the model's chat template (Qwen3's, as its
// tokenizer is) adds no system message of its own, which keeps each prompt near 25 tokens. Speculative
// writing is off here: it runs the same app code on the same WebLLM and Dawn in node, where
// test/gpu/speculate.test.ts checks it on the real kernels.

const MODEL_HOST = `http://127.0.0.1:${Number(process.env.E2E_MODEL_PORT ?? Number(process.env.E2E_PORT ?? 4173) + 22)}`;
// A name of its own: the host logs its requests apart from other tests'.
const NAME = `Qwen2.5-0.5B-Instruct-q4f32_1-${Date.now().toString(36)}`;
const MODEL_URL = `${MODEL_HOST}/synthetic/${NAME}/resolve/main/`;
const LIB_URL = `${MODEL_HOST}/synthetic/${NAME}/lib/${LIBRARY_FILE}`;
const SHARDS = 9; // the library's 267 parameters in shards of at most 32 MB (the embedding alone is 65 MB)
const PAGE_DIR = fileURLToPath(new URL('../.tmp/webllm-kernels/', import.meta.url));
const APP_DIR = fileURLToPath(new URL(`../${process.env.E2E_DIST ?? 'dist'}/`, import.meta.url));

// A tiny template and section keep the prompt near 25 tokens, chat template included.
const TEMPLATES = { update: '{problem}\n{memory}\n{section}', final: '{problem}\n{memory}' };
const STEP = { question: 'Who won?', section: 'Ada won.', templates: TEMPLATES, seed: 42 };
// Run settings whose plan needs a window that is neither WebLLM's, the model's nor the app's minimum.
const RUN = { question: STEP.question, templates: TEMPLATES, chunkTokens: 6500, memoryTokens: 1024 };
const PLANNED_WINDOW = 9216;

let server: { url: string; close(): Promise<void> } | undefined;

test.beforeAll(async () => {
  test.setTimeout(120_000);
  await buildKernelsPage(PAGE_DIR);
  server = await serveFiles({ port: 0, roots: { '/': PAGE_DIR }, pages: { '/': readFileSync(join(PAGE_DIR, 'index.html'), 'utf8') } });
});

test.afterAll(async () => {
  await server?.close();
});

/** Calls the worker's API (test/kernels/kernels.worker.ts) from the page. */
function call<K extends keyof KernelsApi>(page: Page, name: K, ...args: Parameters<KernelsApi[K]>): Promise<Awaited<ReturnType<KernelsApi[K]>>> {
  return page.evaluate(([n, a]) => (globalThis as unknown as { kernels: Record<string, (...x: unknown[]) => Promise<unknown>> }).kernels[n]!(...a), [
    name,
    args as unknown[],
  ] as const) as Promise<Awaited<ReturnType<KernelsApi[K]>>>;
}

/** This test's requests to the model host, as `GET <path under the model's name>`. */
async function hostLog(page: Page): Promise<string[]> {
  return (await page.request.get(`${MODEL_HOST}/synthetic/${NAME}/__log`)).json();
}

function webllmCaches(page: Page): Promise<Record<string, string[]>> {
  return page.evaluate(async () => {
    const out: Record<string, string[]> = {};
    for (const name of ['webllm/config', 'webllm/wasm', 'webllm/model']) out[name] = (await (await caches.open(name)).keys()).map((r) => r.url).sort();
    return out;
  });
}

const seconds = (t0: number) => ((Date.now() - t0) / 1000).toFixed(1);

test('the engine adapter on real WebLLM kernels: download, planned window, streaming, Pause, usage and exact prompt count', async ({ page }) => {
  // Minutes of software GPU work, more on busy cores; the limit catches a hang.
  test.setTimeout(1_800_000);
  await page.goto(server!.url);
  const opened = await call(page, 'open', MODEL_URL, LIB_URL, { speculate: false });
  expect(opened.limit).toBe(32768); // the model config's, not WebLLM's prebuilt 4096
  // Read from the model's own tokenizer_config.json: its template adds no system message, so none is sent.
  expect(opened.systemMessage).toBe('');

  await test.step('the app downloads every file into WebLLM’s caches, under the names WebLLM 0.2.79 reads', async () => {
    const t0 = Date.now();
    const download = await call(page, 'download');
    console.log(`download: ${seconds(t0)} s`);
    const fractions = download.progress.filter((p) => p.phase === 'download').map((p) => p.fraction);
    expect(fractions.at(-1)).toBe(1);
    expect(fractions).toEqual([...fractions].sort((a, b) => a - b));
    // Each file once (the configs and tokenizer when the engine was created), and 0.2.79's weights index.
    const files = ['mlc-chat-config.json', 'tokenizer.json', 'ndarray-cache.json', ...Array.from({ length: SHARDS }, (_, i) => `params_shard_${i}.bin`)];
    const fetched = [...files, 'tokenizer_config.json'].map((f) => `GET resolve/main/${f}`);
    expect((await hostLog(page)).sort()).toEqual([...fetched, `GET lib/${LIBRARY_FILE}`].sort());
    expect(await webllmCaches(page)).toEqual({
      'webllm/config': [`${MODEL_URL}mlc-chat-config.json`],
      'webllm/wasm': [LIB_URL],
      'webllm/model': files
        .filter((f) => f !== 'mlc-chat-config.json')
        .map((f) => `${MODEL_URL}${f}`)
        .sort(),
    });
  });

  await test.step('WebLLM loads from the caches alone, with the window the budget planner asked for', async () => {
    const before = await hostLog(page);
    const t0 = Date.now();
    const loaded = await call(page, 'prepare', RUN);
    console.log(`load: ${seconds(t0)} s`);
    expect(await hostLog(page)).toEqual(before); // nothing fetched by WebLLM itself
    expect(loaded.planned).toBe(PLANNED_WINDOW);
    expect(loaded.readBack).toBe(PLANNED_WINDOW); // the KV cache WebLLM made
    expect(loaded.loadedConfig).toEqual({ context_window_size: PLANNED_WINDOW, repetition_penalty: 1 });
    expect(loaded.session).toEqual({ id: opened.modelId, window: PLANNED_WINDOW });
    expect(loaded.progress.filter((p) => p.phase === 'load').at(-1)).toMatchObject({ state: 'done', fraction: 1 });
  });

  let first = '';
  await test.step('Pause as the first token streams: WebLLM stops before the second, and no revision is made', async () => {
    const t0 = Date.now();
    const paused = await call(page, 'step', { ...STEP, memoryTokens: 8, pause: true });
    console.log(`paused step: ${seconds(t0)} s, first text ${paused.pieces[0]?.at.toFixed(0)} ms, paused at ${paused.pausedAt?.toFixed(0)} ms`);
    expect(paused.pieces).toHaveLength(1);
    expect(paused.pausedAt).toBeDefined();
    expect(paused.error?.name).toBe('AbortError');
    expect(paused.events).toEqual([]);
    expect(paused.results).toHaveLength(1);
    expect(paused.results[0]).toMatchObject({ finishReason: 'abort', text: paused.pieces[0]!.text, usage: { completionTokens: 1 } });
    first = paused.pieces[0]!.text;
  });

  await test.step('the same step again runs to max_tokens; its revision holds WebLLM’s usage and the exact prompt count', async () => {
    const t0 = Date.now();
    const full = await call(page, 'step', { ...STEP, memoryTokens: 2, pause: false });
    console.log(`full step: ${seconds(t0)} s, ${JSON.stringify(full.results[0]?.usage)}, text ${JSON.stringify(full.results[0]?.text)}`);
    expect(full.error).toBeUndefined();
    expect(full.events).toHaveLength(1);
    const revision = full.events[0]!;
    if (revision.kind !== 'revision') throw new Error('expected a revision');
    const { result } = revision;
    expect(revision.index).toBe(0);
    expect(result.finishReason).toBe('length');
    expect(revision.memory).toBe(result.text.trim());
    expect(full.pieces.map((p) => p.text).join('')).toBe(result.text);
    // The same prompt and seed draw the same first token as the paused step did.
    expect(full.pieces[0]?.text).toBe(first);

    const { usage } = result;
    expect(usage.completionTokens).toBe(2);
    // The app's count of what it sent plus the chat template around it (from the messages sent) is WebLLM's count.
    expect(usage.promptTokens).toBe(full.appPromptTokens + full.templateTokens);
    expect(usage.promptTokens).toBeLessThan(30);
    for (const speed of [usage.prefillTokensPerSecond, usage.decodeTokensPerSecond, usage.timeToFirstTokenSeconds]) {
      expect(speed).toBeGreaterThan(0);
      expect(Number.isFinite(speed)).toBe(true);
    }

    // Written by WebLLM's own chat completion, speculative writing being off: the revision records no passes.
    expect(usage.writing).toBeUndefined();

    expect(full.request).toEqual({
      messages: [{ role: 'system', content: opened.systemMessage }, ...full.messages],
      max_tokens: 2,
      temperature: 0.7,
      top_p: 0.95,
      seed: 42,
      repetition_penalty: 1,
      presence_penalty: 0,
      frequency_penalty: 0,
      stream: true,
      stream_options: { include_usage: true },
    });
  });
});

test('the shipped build bundles WebLLM 0.2.86 and never the 0.2.79 that the real-kernel test runs', () => {
  // Names only each version's bundle has (a minifier keeps property names).
  const files = (dir: string) => readdirSync(dir, { recursive: true, withFileTypes: true }).filter((f) => f.isFile() && f.name.endsWith('.js'));
  const has = (dir: string, marker: string) => files(dir).some((f) => readFileSync(join(f.parentPath, f.name), 'utf8').includes(marker));
  expect(has(PAGE_DIR, 'hasNDArrayInCache')).toBe(true); // the marker does find 0.2.79
  expect(has(APP_DIR, 'hasTensorInCache')).toBe(true);
  expect(has(APP_DIR, 'hasNDArrayInCache')).toBe(false);
});
