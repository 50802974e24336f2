import { readFileSync } from 'node:fs';
import { expect, type Page, test } from '@playwright/test';
import { CORPUS, range, storedRevisionIndexes } from './helpers';
import { openPlace } from './places';
import { EVENTS_CHANNEL } from '../src/agent/protocol';

/**
 * A real language-model runtime through the whole app: llama.cpp (WebAssembly)
 * with a tiny random-weight GGUF served by the fixtures server. Its text is
 * gibberish, so these tests check the mechanics: streaming, the memory cap,
 * pause within a second, resume after a reload, each revision exactly once.
 */

const fixturesPort = Number(process.env.E2E_FIXTURES_PORT ?? Number(process.env.E2E_PORT ?? 4173) + 25);
const MODEL_URL = `http://127.0.0.1:${fixturesPort}/llama-2-tiny-random.gguf`;
const MEMORY = 64;
const CHUNK = 200;

/** About 1,100 tokens of Frankenstein (six chunks of 200) by default; longer where a test must catch the run mid-way. */
function shortBook(chars = 4_800): Buffer {
  const text = readFileSync(new URL('frankenstein.txt', CORPUS), 'utf8').replace(/\r\n/g, '\n');
  return Buffer.from(text.slice(40_000, 40_000 + chars), 'utf8');
}

/** Chooses llama.cpp with the fixture model: by URL, or as a file picked on this device. */
async function chooseEngine(page: Page, options: { threads?: number; file?: boolean } = {}): Promise<void> {
  await page.getByRole('combobox', { name: 'Engine' }).selectOption({ label: 'llama.cpp (CPU, WebAssembly)' });
  if (options.file) {
    const buffer = readFileSync(new URL('../../shared/fixtures/llama-2-tiny-random.gguf', import.meta.url));
    await page.getByLabel('Model file').setInputFiles({ name: 'llama-2-tiny-random.gguf', mimeType: 'application/octet-stream', buffer });
    await expect(page.getByText(/Using llama-2-tiny-random\.gguf, copied into this browser's storage/)).toBeVisible();
  } else {
    await page.getByLabel('Model URL').fill(MODEL_URL);
  }
  if (options.threads) await page.getByLabel('Threads').fill(String(options.threads));
}

async function startRead(page: Page, chars?: number): Promise<void> {
  await page.getByLabel('Document').setInputFiles({ name: 'short.txt', mimeType: 'text/plain', buffer: shortBook(chars) });
  await page.getByText(/short\.txt — .*tokens/).waitFor();
  await page.getByLabel('Question').fill('Who is speaking?');
  await page.getByLabel('Chunk size (tokens)').fill(String(CHUNK));
  await page.getByLabel('Memory size (tokens)').fill(String(MEMORY));
  await page.getByRole('button', { name: 'Read' }).click();
}

/** The text streamed into the "Writing memory" region, without its heading. */
async function writingText(page: Page): Promise<string> {
  const region = page.getByRole('region', { name: 'Writing memory' });
  if ((await region.count()) === 0) return '';
  const heading =
    (await region
      .getByRole('heading')
      .textContent()
      .catch(() => '')) ?? '';
  const all = (await region.textContent().catch(() => '')) ?? '';
  return all.slice(heading.length).trim();
}

interface StoredRevision {
  index: number;
  memoryTokens: number;
  promptTokens: number;
  completionTokens: number;
  chunkTokens: number;
  finishReason: string;
}

function storedRevisions(page: Page): Promise<StoredRevision[]> {
  return page.evaluate(
    () =>
      new Promise<StoredRevision[]>((resolve, reject) => {
        const open = indexedDB.open('memagent');
        open.onerror = () => reject(open.error);
        open.onsuccess = () => {
          const req = open.result.transaction('revisions', 'readonly').objectStore('revisions').getAll();
          req.onsuccess = () => {
            open.result.close();
            resolve(req.result as StoredRevision[]);
          };
        };
      }),
  );
}

test('reads a short document with the tiny llama.cpp model: tokens stream and every memory keeps to its cap', async ({ page }) => {
  await page.goto('/');
  expect(await page.evaluate(() => crossOriginIsolated)).toBe(true);
  await chooseEngine(page, { threads: 2 });
  await expect(page.getByText(/2 of \d+ logical cores/)).toBeVisible();
  await startRead(page);

  // Streamed text appears while a step is being written.
  const progress = page.getByRole('progressbar', { name: 'Reading progress' });
  await expect.poll(() => writingText(page), { intervals: [50], timeout: 60_000 }).not.toBe('');

  const answer = page.getByRole('region', { name: 'Answer' });
  await expect(answer.getByText('The answer is written from the final memory')).toHaveCount(0, { timeout: 60_000 });
  const max = Number(await progress.getAttribute('aria-valuemax'));
  expect(max).toBeGreaterThanOrEqual(5);
  await expect(progress).toHaveAttribute('aria-valuenow', String(max));
  expect(Object.values(await storedRevisionIndexes(page))).toEqual([range(max)]);

  const revisions = await storedRevisions(page);
  expect(revisions).toHaveLength(max);
  for (const r of revisions) {
    expect(r.memoryTokens).toBeGreaterThan(0);
    expect(r.memoryTokens).toBeLessThanOrEqual(MEMORY);
    // Counts the model itself reported: a prompt with the chunk in it, and a reply within the cap.
    expect(r.promptTokens).toBeGreaterThan(r.chunkTokens);
    expect(r.completionTokens).toBeGreaterThan(0);
    expect(r.completionTokens).toBeLessThanOrEqual(MEMORY);
  }
  // The list names the same sizes.
  const first = page.getByRole('list', { name: 'Memory revisions' }).getByRole('listitem').first();
  const shown = Number(/(\d+) memory tokens/.exec((await first.getAttribute('aria-label')) ?? '')?.[1]);
  expect(shown).toBeLessThanOrEqual(MEMORY);
  await expect(answer).not.toHaveText(/^Answer$/);
});

test('Pause stops llama.cpp within a second, stores no partial revision, and the run resumes after a reload', async ({ page }) => {
  await page.goto('/');
  // A model file picked on this device: the resume after the reload finds its stored copy.
  await chooseEngine(page, { file: true });
  // About 35 chunks: the tiny model writes fast, and the pause must land while the run is still reading.
  await startRead(page, 28_000);

  const progress = page.getByRole('progressbar', { name: 'Reading progress' });
  await expect.poll(async () => Number(await progress.getAttribute('aria-valuenow')), { timeout: 60_000 }).toBeGreaterThanOrEqual(2);
  // The worker's events, timed in the page: streamed text arrives as 'writing' events while tokens flow.
  await page.evaluate((name) => {
    const seen: { t: number; type: string; status?: string }[] = [];
    (window as unknown as { seen: typeof seen }).seen = seen;
    new BroadcastChannel(name).onmessage = (e: MessageEvent<{ type: string; status?: string }>) =>
      seen.push({ t: performance.now(), type: e.data.type, status: e.data.status });
  }, EVENTS_CHANNEL);
  // Pause while a memory is being written: right after streamed text arrives.
  await expect.poll(() => writingText(page), { intervals: [20], timeout: 30_000 }).not.toBe('');
  await page.waitForFunction(() => (window as unknown as { seen: { type: string }[] }).seen.some((e) => e.type === 'writing'), undefined, {
    polling: 5,
    timeout: 30_000,
  });
  const pressed = await page.evaluate(() => performance.now());
  await page.getByRole('button', { name: 'Pause' }).click();
  await expect(page.getByRole('button', { name: 'Resume' })).toBeVisible();
  // Generation itself stopped: no streamed text later than a second after the press, timed on the page's clock.
  await page.waitForTimeout(1500);
  const seen = await page.evaluate(() => (window as unknown as { seen: { t: number; type: string; status?: string }[] }).seen);
  const writes = seen.filter((e) => e.type === 'writing').map((e) => e.t);
  const paused = seen.find((e) => e.type === 'status' && e.status === 'paused')!.t;
  expect(writes.some((t) => t < paused)).toBe(true); // the model was writing when the pause took effect
  expect(Math.max(...writes) - pressed).toBeLessThan(1000);

  const done = Number(await progress.getAttribute('aria-valuenow'));
  const max = Number(await progress.getAttribute('aria-valuemax'));
  expect(done).toBeLessThan(max);
  // The step in progress was dropped, not stored.
  expect(Object.values(await storedRevisionIndexes(page))).toEqual([range(done)]);

  await page.reload();
  await page.getByRole('button', { name: 'Resume' }).click();
  await expect(page.getByRole('region', { name: 'Answer' }).getByText('The answer is written from the final memory')).toHaveCount(0, {
    timeout: 60_000,
  });
  await expect(progress).toHaveAttribute('aria-valuenow', String(max));
  expect(Object.values(await storedRevisionIndexes(page))).toEqual([range(max)]);
  for (const r of await storedRevisions(page)) expect(r.memoryTokens).toBeLessThanOrEqual(MEMORY);
});

test('once downloaded, the model and llama.cpp load with no network, and Models lists and deletes it', async ({ page, context }) => {
  await page.goto('/');
  await chooseEngine(page);
  await page.getByRole('button', { name: 'Load model and measure speed' }).click();
  await expect(page.getByText(/Measured here with \d+ threads?: reads \d+ tokens\/s, writes [\d.]+ tokens\/s/)).toBeVisible({ timeout: 60_000 });
  await openPlace(page, 'Library');
  await expect(page.getByText(/^Offline: ready/)).toBeVisible({ timeout: 60_000 });
  await openPlace(page, 'Read');

  await context.setOffline(true);
  await page.reload();
  expect(await page.evaluate(() => crossOriginIsolated)).toBe(true);
  await chooseEngine(page);
  // The measured speed was kept in IndexedDB by the worker, not in localStorage by the page.
  await expect(page.getByText(/Measured here with \d+ threads?: reads \d+ tokens\/s/)).toBeVisible();
  expect(await page.evaluate(() => localStorage.getItem('memagent-wllama-speed'))).toBeNull();
  await startRead(page);
  await expect(page.getByRole('region', { name: 'Answer' }).getByText('The answer is written from the final memory')).toHaveCount(0, {
    timeout: 60_000,
  });
  const progress = page.getByRole('progressbar', { name: 'Reading progress' });
  const max = Number(await progress.getAttribute('aria-valuemax'));
  await expect(progress).toHaveAttribute('aria-valuenow', String(max));

  // Models lists the downloaded model with its size; Delete removes it from this browser.
  await openPlace(page, 'Models');
  const llama = page.getByRole('region', { name: 'llama.cpp (CPU, WebAssembly)' });
  const model = llama.getByRole('listitem', { name: 'llama-2-tiny-random.gguf' });
  await expect(model).toContainText(`1.7 MB · from 127.0.0.1:${fixturesPort}`);
  await expect(model).toContainText(/Measured on this device with \d+ threads?: reads [\d.,]+ tokens\/s, writes [\d.,]+ tokens\/s/);
  await model.getByRole('button', { name: 'Delete llama-2-tiny-random.gguf' }).click();
  await expect(model).toHaveCount(0);
  await expect(llama).toContainText('None yet');
});
