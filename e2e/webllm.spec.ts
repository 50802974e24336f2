import { expect, type Page, test, type Worker } from '@playwright/test';
import { chunkCount } from '../src/core/estimate';
import { PLANTED, plantedBook } from './helpers';
import { openPlace } from './places';

// Runs in the 'webgpu' project: Chromium with --enable-unsafe-webgpu gives SwiftShader, a software
// adapter without shader-f16. No real model can run here, so these tests go up to the GPU boundary:
// capability, model choice, our download into WebLLM's caches, and WebLLM's own load failing cleanly.

const MODEL_HOST = `http://127.0.0.1:${Number(process.env.E2E_MODEL_PORT ?? Number(process.env.E2E_PORT ?? 4173) + 22)}`;
const LIB = `${MODEL_HOST}/lib/qwen2-7b-test.wasm`;
const SHARDS = 4;

test.describe.configure({ mode: 'serial' });

test.beforeEach(async ({ request }) => {
  await request.post(`${MODEL_HOST}/__reset`);
});

function models(page: Page) {
  return page.getByRole('region', { name: 'Models' });
}

async function addModel(page: Page, name: string, variant: 'good' | 'held' | 'missing' | 'drop', urls?: { model: string; lib: string }): Promise<void> {
  await openPlace(page, 'Models');
  const region = models(page);
  await region.getByText('Add a model by URL').click();
  await region.getByLabel('Model name').fill(name);
  await region.getByLabel('Model URL').fill(urls?.model ?? `${MODEL_HOST}/m/${variant}`);
  await region.getByLabel('Model library URL').fill(urls?.lib ?? LIB);
  await region.getByRole('button', { name: 'Add model' }).click();
  await expect(region.getByRole('listitem', { name })).toBeVisible();
}

/** Cache Storage as WebLLM reads it: every key of its three caches (and of the downloader's parts, if asked). */
function webllmCaches(page: Page, withParts = false): Promise<Record<string, string[]>> {
  return page.evaluate(async (parts) => {
    const out: Record<string, string[]> = {};
    for (const name of ['webllm/config', 'webllm/wasm', 'webllm/model', ...(parts ? ['memagent/model-parts'] : [])]) {
      out[name] = (await (await caches.open(name)).keys()).map((r) => r.url).sort();
    }
    return out;
  }, withParts);
}

interface LogEntry {
  method: string;
  host: 'hub' | 'cdn';
  path: string;
  status: number;
  rangeStart?: number;
  served: number;
  ended?: 'whole' | 'dropped' | 'stalled' | 'client';
}

async function hostLog(page: Page): Promise<LogEntry[]> {
  return (await page.request.get(`${MODEL_HOST}/__log`)).json();
}

/** Every value the "Model download" bar showed, and every text beside it, recorded in the page as they change. */
async function recordProgress(page: Page): Promise<{ values(): Promise<number[]>; texts(): Promise<string[]> }> {
  await page.evaluate(() => {
    const seen: number[] = [];
    const texts: string[] = [];
    Object.assign(window, { seenProgress: seen, seenTexts: texts });
    new MutationObserver(() => {
      const bar = document.querySelector('[role="progressbar"][aria-label="Model download"]');
      const v = Number(bar?.getAttribute('aria-valuenow'));
      if (bar && seen[seen.length - 1] !== v) seen.push(v);
      const text = bar?.getAttribute('aria-valuetext');
      if (text && texts[texts.length - 1] !== text) texts.push(text);
    }).observe(document.body, { subtree: true, childList: true, attributes: true, characterData: true });
  });
  const read = (key: string) => () => page.evaluate((k) => (window as unknown as Record<string, never[]>)[k]!, key);
  return { values: read('seenProgress') as () => Promise<number[]>, texts: read('seenTexts') as () => Promise<string[]> };
}

/**
 * Shorter waits in every worker of the page (the stall timeout is 30 s for a person), so a stalled host
 * costs this test seconds; parts are stored every 300 ms, so a reload loses little.
 */
function tuneDownloads(page: Page): Promise<unknown>[] {
  const applied: Promise<unknown>[] = [];
  const apply = (w: Worker) =>
    applied.push(w.evaluate(() => Object.assign(self, { memagentDownloadTuning: { stallMs: 3000, keepEveryMs: 300 } })).catch(() => undefined));
  page.on('worker', apply);
  return applied;
}

/** SHA-256 of every entry of WebLLM's caches and of the downloader's parts cache, by URL. */
function cacheDigests(page: Page): Promise<Record<string, Record<string, string>>> {
  return page.evaluate(async () => {
    const out: Record<string, Record<string, string>> = {};
    for (const name of ['webllm/config', 'webllm/wasm', 'webllm/model', 'memagent/model-parts']) {
      const cache = await caches.open(name);
      out[name] = {};
      for (const req of await cache.keys()) {
        const bytes = await (await cache.match(req))!.arrayBuffer();
        out[name]![req.url] = [...new Uint8Array(await crypto.subtle.digest('SHA-256', bytes))].map((b) => b.toString(16).padStart(2, '0')).join('');
      }
    }
    return out;
  });
}

test('a software adapter: WebLLM is offered with a warning, and the q4f32_1 build is chosen for lack of shader-f16', async ({ page }) => {
  await page.goto('/');
  const engine = page.getByRole('combobox', { name: 'Engine' });
  // A software adapter would crawl through a book: the default stays the first engine.
  await expect(engine).toHaveValue('extractive');
  await engine.selectOption({ label: 'WebLLM (WebGPU)' });
  await expect(page.getByRole('status').filter({ hasText: 'software GPU' })).toContainText('very slowly');
  const model = page.getByRole('combobox', { name: 'Model', exact: true });
  await expect(model).toHaveValue('Qwen2.5-7B-Instruct-q4f32_1-MLC');
  await expect(page.getByText(/lacks the shader-f16 feature/).first()).toBeVisible();
  // The q4f16_1 builds are listed but cannot be chosen here.
  await expect(model.locator('option[value="Qwen2.5-7B-Instruct-q4f16_1-MLC"]')).toBeDisabled();
  // Qwen2.5 0.5B–7B and Qwen3 0.6B–8B, each in two builds.
  await expect(model.locator('option')).toHaveCount(16);
  await openPlace(page, 'Models');
  await expect(models(page)).toContainText('no shader-f16');
});

test('Speculative writing is on by default, says what it does, and turned off stays off on the next visit', async ({ page }) => {
  await page.goto('/');
  await page.getByRole('combobox', { name: 'Engine' }).selectOption({ label: 'WebLLM (WebGPU)' });
  const speculate = page.getByRole('checkbox', { name: 'Speculative writing' });
  await expect(speculate).toBeChecked();
  await expect(speculate).toHaveAccessibleDescription(/checks several of them in one pass of the model/);
  await speculate.uncheck();
  await page.reload();
  await page.getByRole('combobox', { name: 'Engine' }).selectOption({ label: 'WebLLM (WebGPU)' });
  await expect(speculate).not.toBeChecked();
  await speculate.check();
  await page.reload();
  await page.getByRole('combobox', { name: 'Engine' }).selectOption({ label: 'WebLLM (WebGPU)' });
  await expect(speculate).toBeChecked();
});

test('Download fills WebLLM’s caches file by file with a moving progress bar; Delete empties them', async ({ page }) => {
  await page.goto('/');
  await addModel(page, 'Test model', 'good');
  const row = models(page).getByRole('listitem', { name: 'Test model' });
  await expect(row).toContainText('Not downloaded');
  const seen = await recordProgress(page);
  await row.getByRole('button', { name: 'Download Test model', exact: true }).click();
  const bar = page.getByRole('progressbar', { name: 'Model download' });
  await expect(bar).toHaveAttribute('aria-valuenow', '100', { timeout: 30_000 });
  await expect(row).toContainText('Downloaded, usable offline');
  await expect(row).toContainText('4.0 MB to download');
  const values = await seen.values();
  expect(values.some((v) => v > 0 && v < 100)).toBe(true);
  expect(values).toEqual([...values].sort((a, b) => a - b)); // never goes back

  const base = `${MODEL_HOST}/m/good/resolve/main/`;
  expect(await webllmCaches(page)).toEqual({
    'webllm/config': [`${base}mlc-chat-config.json`],
    'webllm/wasm': [LIB],
    'webllm/model': [...Array.from({ length: SHARDS }, (_, i) => `${base}params_shard_${i}.bin`), `${base}tensor-cache.json`, `${base}tokenizer.json`].sort(),
  });

  // A reload reads the state from the cache, not from memory.
  await page.reload();
  await expect(models(page).getByRole('listitem', { name: 'Test model' })).toContainText('Downloaded');
  await models(page).getByRole('button', { name: 'Delete Test model', exact: true }).click();
  await expect(models(page).getByRole('listitem', { name: 'Test model' })).toContainText('Not downloaded');
  expect(await webllmCaches(page)).toEqual({ 'webllm/config': [], 'webllm/wasm': [], 'webllm/model': [] });
});

test('a host that behaves like Hugging Face and its CDN: compression, redirects to another origin, ranges, a drop, a 429, a stall and a reload mid-way; every byte arrives once', async ({
  page,
}) => {
  test.setTimeout(240_000);
  // 8 shards of 2 MiB at 1 MiB/s per connection (test/support/cdn-host.ts, preset "cdn").
  const CDN_SHARDS = 8;
  const CDN_SHARD = 2 * 1024 * 1024;
  const hub = `${MODEL_HOST}/r/cdn`;
  const lib = `${hub}/lib/qwen2-7b-test.wasm`;
  const base = `${hub}/resolve/main/`;
  tuneDownloads(page);
  await page.goto('/');
  await addModel(page, 'CDN model', 'good', { model: hub, lib });
  const row = models(page).getByRole('listitem', { name: 'CDN model' });
  let seen = await recordProgress(page);
  await row.getByRole('button', { name: 'Download CDN model', exact: true }).click();

  // Mid-way: the stalled shard done, every shard begun, and each one still under way with a part stored.
  const shardOf = (url: string) => Number(/params_shard_(\d+)\.bin/.exec(url)?.[1] ?? NaN);
  await expect
    .poll(
      async () => {
        const keys = await webllmCaches(page, true);
        const done = new Set(keys['webllm/model']!.map(shardOf));
        const parted = new Set(keys['memagent/model-parts']!.map(shardOf));
        const begun = new Set((await hostLog(page)).filter((e) => e.host === 'cdn' && e.served > 0).map((e) => shardOf(e.path)));
        const open = [...begun].filter((i) => !done.has(i));
        return done.has(2) && begun.size === CDN_SHARDS && open.length > 0 && open.every((i) => parted.has(i));
      },
      { timeout: 60_000, intervals: [100] },
    )
    .toBe(true);
  const before = { values: await seen.values(), texts: await seen.texts() };
  await page.reload(); // the worker, and its download, end here: only stored parts survive
  await expect(row).toContainText('Partly downloaded');
  seen = await recordProgress(page);
  await row.getByRole('button', { name: 'Resume download CDN model', exact: true }).click();
  await expect(row).toContainText('Downloaded', { timeout: 60_000 });
  await expect(models(page).getByRole('alert')).toHaveCount(0);
  const after = { values: await seen.values(), texts: await seen.texts() };

  // The Models region said why it waited.
  expect(before.texts).toContainEqual(expect.stringContaining('The host is busy (HTTP 429): asking again for weights file params_shard_1.bin in 1 s'));
  expect(before.texts).toContainEqual(expect.stringContaining('No data for 3 s for weights file params_shard_2.bin: asking again'));
  // The bar never went back, before the reload nor after it, where it started from what was stored.
  for (const values of [before.values, after.values]) expect(values).toEqual([...values].sort((a, b) => a - b));
  expect(after.values[0]).toBeGreaterThan(0);
  expect(after.values.at(-1)).toBe(100);

  // Every cache entry, byte for byte, is what the host served (decoded); no part is left.
  const served: Record<string, string> = await (await page.request.get(`${MODEL_HOST}/__files/cdn`)).json();
  const digests = await cacheDigests(page);
  expect(digests['webllm/config']).toEqual({ [`${base}mlc-chat-config.json`]: served['mlc-chat-config.json'] });
  expect(digests['webllm/wasm']).toEqual({ [lib]: served['lib.wasm'] });
  const files = ['tokenizer.json', 'tensor-cache.json', ...Array.from({ length: CDN_SHARDS }, (_, i) => `params_shard_${i}.bin`)];
  expect(digests['webllm/model']).toEqual(Object.fromEntries(files.map((f) => [`${base}${f}`, served[f]])));
  expect(digests['memagent/model-parts']).toEqual({});

  // What the host saw (of this model: other test files share the host): no byte range asked for twice, except
  // after the stall, so the shards under way at the reload resumed from their stored parts. Bytes are served twice
  // only where the reload cut a connection: what the page had not stored yet, and what was still in the sockets'
  // buffers (so less than the three shards under way).
  const log = (await hostLog(page)).filter((e) => e.path.startsWith('/r/cdn/') || e.path.startsWith('/cdn/cdn/'));
  let again = 0;
  for (let i = 0; i < CDN_SHARDS; i++) {
    const bodies = log.filter((e) => e.host === 'cdn' && e.path.endsWith(`/params_shard_${i}.bin`) && e.served > 0);
    bodies.forEach((e, k) => {
      const start = e.rangeStart ?? 0;
      const earlier = bodies.slice(0, k).filter((b) => (b.rangeStart ?? 0) === start);
      expect(
        earlier.every((b) => b.ended === 'stalled'),
        `shard ${i}: ${bodies.map((b) => `${b.rangeStart ?? 0} (${b.ended})`).join(', ')}`,
      ).toBe(true);
    });
    again += bodies.reduce((n, e) => n + e.served, 0) - CDN_SHARD;
  }
  expect(again).toBeGreaterThanOrEqual(0);
  expect(again).toBeLessThan(3 * CDN_SHARD);
  const shard = (i: number) => log.filter((e) => e.path.endsWith(`/params_shard_${i}.bin`)).map((e) => `${e.host} ${e.status}`);
  expect(shard(0)).toContain('cdn 206'); // the drop at 60 %: the rest, asked for with Range
  expect(shard(1).slice(0, 2)).toEqual(['hub 429', 'hub 302']);
  // The stall outlived the CDN's signature: the old URL is refused, the hub hands out a new one.
  expect(shard(2).slice(0, 5)).toEqual(['hub 302', 'cdn 200', 'cdn 403', 'hub 302', 'cdn 206']);
  // JSON came compressed, smaller than what was stored.
  expect(log.find((e) => e.path === '/r/cdn/resolve/main/tokenizer.json')!.served).toBeLessThan(5_000_000);
});

test('a connection dropped mid-shard gives an alert, keeps finished files, and Download resumes from them', async ({ page }) => {
  await page.goto('/');
  await addModel(page, 'Flaky model', 'drop');
  const row = models(page).getByRole('listitem', { name: 'Flaky model' });
  await row.getByRole('button', { name: 'Download Flaky model', exact: true }).click();
  const alert = models(page).getByRole('alert');
  await expect(alert).toContainText('The connection failed while downloading weights file params_shard_2.bin', { timeout: 30_000 });
  await expect(alert).toContainText('press Download again to resume');
  await expect(row).toContainText('Partly downloaded');
  const kept = (await webllmCaches(page))['webllm/model']!.filter((u) => u.endsWith('.bin'));
  expect(kept).not.toContain(`${MODEL_HOST}/m/drop/resolve/main/params_shard_2.bin`);
  expect(kept.length).toBeGreaterThanOrEqual(2);

  await page.request.post(`${MODEL_HOST}/__heal`);
  await row.getByRole('button', { name: 'Resume download Flaky model', exact: true }).click();
  await expect(row).toContainText('Downloaded', { timeout: 30_000 });
  await expect(models(page).getByRole('alert')).toHaveCount(0);
  // Files finished before the drop were not fetched again.
  const log = await hostLog(page);
  for (const url of kept) {
    const path = new URL(url).pathname;
    expect(log.filter((e) => e.path === path && e.method === 'GET')).toHaveLength(1);
  }
  expect(log.filter((e) => e.path.endsWith('params_shard_2.bin')).length).toBeGreaterThan(1);
});

test('a tab closed mid-download keeps the finished files, Stop download keeps them too, and Download resumes from them', async ({ page }) => {
  // The host holds every shard but the first until the test lets them go: the download is caught half done.
  await page.request.post(`${MODEL_HOST}/__hold`);
  await page.goto('/');
  await addModel(page, 'Held model', 'held');
  await models(page).getByRole('button', { name: 'Download Held model', exact: true }).click();
  const shards = async () => (await webllmCaches(page))['webllm/model']!.filter((u) => u.endsWith('.bin'));
  await expect.poll(async () => (await shards()).length, { timeout: 30_000 }).toBeGreaterThanOrEqual(1);
  await page.reload(); // the worker, and its download, end here
  const kept = await shards();
  expect(kept.map((u) => new URL(u).pathname.split('/').at(-1))).toEqual(['params_shard_0.bin']);
  const row = models(page).getByRole('listitem', { name: 'Held model' });
  await expect(row).toContainText('Partly downloaded');
  await row.getByRole('button', { name: 'Resume download Held model', exact: true }).click();
  // Stop download ends it quietly, keeping what is done; Resume download carries on.
  await row.getByRole('button', { name: 'Stop download Held model', exact: true }).click();
  await expect(row.getByRole('button', { name: 'Resume download Held model', exact: true })).toBeEnabled();
  await expect(row).toContainText('Partly downloaded');
  await expect(models(page).getByRole('alert')).toHaveCount(0);
  await page.request.post(`${MODEL_HOST}/__release`);
  await row.getByRole('button', { name: 'Resume download Held model', exact: true }).click();
  await expect(row).toContainText('Downloaded', { timeout: 30_000 });
  const log = await hostLog(page);
  for (const url of kept) expect(log.filter((e) => e.path === new URL(url).pathname)).toHaveLength(1);
});

test('a missing file (404) gives a clear alert', async ({ page }) => {
  await page.goto('/');
  await addModel(page, 'Missing model', 'missing');
  await models(page).getByRole('button', { name: 'Download Missing model', exact: true }).click();
  const alert = models(page).getByRole('alert');
  await expect(alert).toContainText('weights file params_shard_1.bin was not found');
  await expect(alert).toContainText('HTTP 404');
  await expect(alert).toContainText('Check the model URL');
});

test('an invalid model library: Load and a run each end in a clear alert, not a hang, and loading needs no network', async ({ page, context }) => {
  await page.goto('/');
  await addModel(page, 'Broken library', 'good');
  const region = models(page);
  await region.getByRole('button', { name: 'Download Broken library', exact: true }).click();
  await expect(region.getByRole('listitem', { name: 'Broken library' })).toContainText('Downloaded', { timeout: 30_000 });

  await region.getByRole('button', { name: 'Load Broken library', exact: true }).click();
  const alert = region.getByRole('alert');
  await expect(alert).toContainText(`The model library ${LIB} could not be loaded`, { timeout: 30_000 });
  await expect(alert).toContainText('CompileError');
  await expect(alert).toContainText('Qwen2-7B-Instruct library');

  // Everything is cached: with the network off, WebLLM gets exactly as far again, and the host hears nothing.
  const before = (await hostLog(page)).length;
  await context.setOffline(true);
  await region.getByRole('button', { name: 'Load Broken library', exact: true }).click();
  await expect(alert).toContainText('could not be loaded', { timeout: 30_000 });
  await context.setOffline(false);
  expect((await hostLog(page)).length).toBe(before);

  // A run on the model: counted with the model's own tokenizer.json, planned, then stopped by the same error.
  await openPlace(page, 'Read');
  await page.getByLabel('Document').setInputFiles({ name: 'frankenstein.txt', mimeType: 'text/plain', buffer: plantedBook(0.5) });
  await page.getByText(/frankenstein\.txt — .*tokens/).waitFor();
  await page.getByLabel('Question').fill(PLANTED.question);
  await page.getByRole('combobox', { name: 'Engine' }).selectOption({ label: 'WebLLM (WebGPU)' });
  await page.getByRole('combobox', { name: 'Model', exact: true }).selectOption('custom:Broken library');
  await page.getByRole('checkbox', { name: 'Speculative writing' }).uncheck();
  await page.getByRole('button', { name: 'Read' }).click();
  const run = page.getByRole('region', { name: 'Run' });
  await expect(run.getByRole('alert')).toContainText('could not be loaded', { timeout: 60_000 });
  await expect(page.getByRole('progressbar', { name: 'Reading progress' })).toHaveAttribute('aria-valuenow', '0');
  await run.getByText('Run settings').click();
  await expect(run.getByText('Context per step')).toBeVisible();
  await expect(run.getByText('model custom:Broken library')).toBeVisible();
  await expect(run.getByText('off: WebLLM’s own decoding, one token per pass')).toBeVisible();
  // The run was planned from the book's count and stopped before its first chunk was cut (the model's
  // tokenizer.json counts as the bundled Qwen tokenizer does: test/webllm-tokenizer.test.ts).
  const counts = await page.evaluate(
    () =>
      new Promise<{ document: number; chunks: number; estimate: number; chunkTokens: number; engine: string; config: Record<string, unknown> }>(
        (resolve, reject) => {
          const open = indexedDB.open('memagent');
          open.onerror = () => reject(open.error);
          open.onsuccess = () => {
            const tx = open.result.transaction(['documents', 'runs', 'runChunks']);
            const docs = tx.objectStore('documents').getAll();
            const runs = tx.objectStore('runs').getAll();
            const chunks = tx.objectStore('runChunks').getAll();
            tx.oncomplete = () => {
              const run = runs.result[0] as {
                engineId: string;
                engineConfig: Record<string, unknown>;
                chunking: { estimate: number };
                settings: { chunkTokens: number };
              };
              resolve({
                document: docs.result[0].tokens,
                chunks: (chunks.result[0] as { spans: Uint32Array }).spans.length / 3,
                estimate: run.chunking.estimate,
                chunkTokens: run.settings.chunkTokens,
                engine: run.engineId,
                config: run.engineConfig,
              });
              open.result.close();
            };
          };
        },
      ),
  );
  expect(counts.engine).toBe('webllm');
  // Speculative writing turned off: the run's engine config says so, beside the model.
  expect(counts.config).toMatchObject({ model: 'custom:Broken library', speculate: false });
  expect(counts.chunks).toBe(0);
  expect(counts.estimate).toBe(chunkCount(counts.document, counts.chunkTokens));
});
