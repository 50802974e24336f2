import { readFileSync } from 'node:fs';
import { expect, type Locator, type Page, test } from '@playwright/test';
import { CORPUS, heldAt, holdSteps, range, releaseSteps, storedRevisionIndexes } from './helpers';
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

/** Records, in the page, every run event the workers send from now on, in order. */
async function recordEvents(page: Page): Promise<void> {
  await page.evaluate((name) => {
    const seen: { type: string; index?: number; status?: string }[] = [];
    (window as unknown as { seen: typeof seen }).seen = seen;
    new BroadcastChannel(name).onmessage = (e: MessageEvent<{ type: string; index?: number; status?: string }>) =>
      seen.push({ type: e.data.type, index: e.data.index, status: e.data.status });
  }, EVENTS_CHANNEL);
}

function recorded(page: Page): Promise<{ type: string; index?: number; status?: string }[]> {
  return page.evaluate(() => (window as unknown as { seen: { type: string; index?: number; status?: string }[] }).seen);
}

// A real llama.cpp model writes every step on the CPU: on a busy machine a read takes minutes, not seconds, so the
// reads here wait for their last step however long it takes, within a generous ceiling.
test.describe.configure({ timeout: 600_000 });

/** Waits until the read has stored every chunk's revision; the number of chunks. */
async function readToTheEnd(progress: Locator): Promise<number> {
  await expect(progress).toHaveAttribute('aria-valuetext', /^\d+ of \d+ chunks read$/, { timeout: 300_000 });
  const max = Number(await progress.getAttribute('aria-valuemax'));
  await expect(progress).toHaveAttribute('aria-valuenow', String(max), { timeout: 480_000 });
  return max;
}

test('reads a short document with the tiny llama.cpp model: tokens stream and every memory keeps to its cap', async ({ page }) => {
  await page.goto('/');
  expect(await page.evaluate(() => crossOriginIsolated)).toBe(true);
  await chooseEngine(page, { threads: 2 });
  await expect(page.getByText(/2 of \d+ logical cores/)).toBeVisible();
  await recordEvents(page);
  await startRead(page);

  const progress = page.getByRole('progressbar', { name: 'Reading progress' });
  const answer = page.getByRole('region', { name: 'Answer' });
  const max = await readToTheEnd(progress);
  expect(max).toBeGreaterThanOrEqual(5);
  expect(Object.values(await storedRevisionIndexes(page))).toEqual([range(max)]);

  // The text being written streamed to the page: the first step's at once, each before its step was stored.
  const events = await recorded(page);
  const writes = events.filter((e) => e.type === 'writing');
  expect(writes.some((w) => w.index === 0)).toBe(true);
  for (const w of writes) {
    const stored = events.findIndex((e) => e.type === 'revision' && e.index === w.index);
    if (w.index! < max) expect(events.indexOf(w)).toBeLessThan(stored);
  }

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

test('Pause while llama.cpp writes stops it, stores no partial revision, and the run resumes after a reload', async ({ page }) => {
  await page.goto('/');
  // A model file picked on this device: the resume after the reload finds its stored copy.
  await chooseEngine(page, { file: true });
  await recordEvents(page);
  // The run waits before its fourth step; then it may write two steps and waits again before the sixth: the
  // Pause below lands while it writes chunk 3 or 4, or at the sixth at the latest, never after the run's end.
  await holdSteps(page, 3);
  await startRead(page, 28_000);
  const progress = page.getByRole('progressbar', { name: 'Reading progress' });
  await heldAt(page, 3);
  await expect(progress).toHaveAttribute('aria-valuenow', '3');
  await holdSteps(page, 5);
  // Pause as a person would, once the model writes chunk 3 or later (or, if those steps streamed nothing, once it waits at 5).
  await page.waitForFunction(
    () => {
      const w = window as unknown as { seen: { type: string; index?: number }[]; __held: { index: number }[] };
      return w.seen.some((e) => e.type === 'writing' && e.index! >= 3) || w.__held.some((h) => h.index === 5);
    },
    undefined,
    { polling: 5 },
  );
  await page.getByRole('button', { name: 'Pause' }).click();
  await expect(page.getByRole('button', { name: 'Resume' })).toBeVisible();
  await releaseSteps(page);

  const done = Number(await progress.getAttribute('aria-valuenow'));
  const max = Number(await progress.getAttribute('aria-valuemax'));
  expect(done).toBeGreaterThanOrEqual(3);
  expect(done).toBeLessThanOrEqual(5);
  expect(max).toBeGreaterThan(5);
  // The step in progress was dropped, not stored, and nothing of it streamed once the pause took effect.
  expect(Object.values(await storedRevisionIndexes(page))).toEqual([range(done)]);
  const events = await recorded(page);
  const paused = events.findIndex((e) => e.type === 'status' && e.status === 'paused');
  expect(paused).toBeGreaterThan(0);
  expect(events.slice(paused).filter((e) => e.type === 'writing' || e.type === 'revision')).toEqual([]);

  await page.reload();
  await page.getByRole('button', { name: 'Resume' }).click();
  expect(await readToTheEnd(progress)).toBe(max);
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
  await readToTheEnd(page.getByRole('progressbar', { name: 'Reading progress' }));

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
