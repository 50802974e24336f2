/**
 * From upload to the first chunk being read, in the app in Chromium: a novel
 * (Frankenstein, 100K tokens) and a 3.5M-token book (Frankenstein x34). A long
 * book is usable as soon as it is stored (its tokens are counted afterwards)
 * and its first chunk is cut while the rest waits. Baseline, measured in the
 * same run: the background count of the whole long book, which an import that
 * counted first would have waited for.
 */
import { readFileSync } from 'node:fs';
import type { Browser } from '@playwright/test';
import { firstStepAt, startApp } from './app';

const PORT = Number(process.env.BENCH_PORT ?? 4394);

interface Marks {
  uploadAt: number;
  usableAt: number;
  exactAt: number;
  readAt: number;
}

interface FirstChunk {
  megabytes: number;
  /** Upload → the document shown as usable. */
  usable: number;
  /** Press on Read → the first step's engine call. */
  toFirst: number;
  /** Upload → the exact token count shown. */
  counted: number;
}

async function measure(browser: Browser, url: string, copies: number): Promise<FirstChunk> {
  const context = await browser.newContext();
  const page = await context.newPage();
  await page.goto(`${url}/`);
  await page.getByRole('button', { name: 'Read' }).waitFor();
  // A person drops a book into a settled page: the offline cache installed, the worker's tokenizer loaded.
  await page.evaluate(() => navigator.serviceWorker?.ready);
  await page.waitForTimeout(2000);
  await page.getByLabel('Question').fill('Where did Victor first see the creature after it left the laboratory?');
  const book = readFileSync(new URL('../../shared/corpus/frankenstein.txt', import.meta.url), 'utf8').replace(/^\uFEFF/, '');
  const text = Buffer.from(book.repeat(copies));
  // Page-side clock marks: the file landing in the form, the document shown as usable, its exact count, the press on Read.
  await page.evaluate(() => {
    const marks = { uploadAt: 0, usableAt: 0, exactAt: 0, readAt: 0 };
    (window as unknown as { __marks: typeof marks }).__marks = marks;
    document.addEventListener('change', () => (marks.uploadAt ||= Date.now()), true);
    document.addEventListener('submit', () => (marks.readAt ||= Date.now()), true);
    new MutationObserver(() => {
      const shown = document.body.innerText;
      if (!marks.usableAt && /book\.txt — .*tokens/.test(shown)) marks.usableAt = Date.now();
      if (!marks.exactAt && /book\.txt — [^\n]*\d tokens(?! \(counting)/.test(shown)) marks.exactAt = Date.now();
    }).observe(document.body, { subtree: true, childList: true, characterData: true });
  });
  await page.getByLabel('Document').setInputFiles({ name: 'book.txt', mimeType: 'text/plain', buffer: text });
  await page.getByText(/book\.txt — .*tokens/).waitFor({ timeout: 120_000 });
  await page.getByRole('button', { name: 'Read' }).click();
  // The first revision is committed (the timeline, a virtual list, may already show later ones only).
  const progress = page.getByRole('progressbar', { name: 'Reading progress' });
  await progress.waitFor({ timeout: 120_000 });
  await page.waitForFunction(
    () => Number(document.querySelector('[role=progressbar][aria-label="Reading progress"]')?.getAttribute('aria-valuenow')) >= 1,
    undefined,
    { timeout: 120_000 },
  );
  await page.getByText(/book\.txt — [^\n]*\d tokens$/).waitFor({ timeout: 120_000 });
  const marks = await page.evaluate(() => (window as unknown as { __marks: Marks }).__marks);
  const first = await firstStepAt(page);
  await context.close();
  return {
    megabytes: text.length / 1e6,
    usable: marks.usableAt - marks.uploadAt,
    // The first step began when its engine call began: commit time less the call's own time.
    toFirst: first - marks.readAt,
    counted: marks.exactAt - marks.uploadAt,
  };
}

/** A novel as long as `copies` Frankensteins, told apart from the others by `seed` (its paragraphs in another order). */
function novel(seed: number, copies: number): Buffer {
  const paragraphs = readFileSync(new URL('../../shared/corpus/frankenstein.txt', import.meta.url), 'utf8')
    .replace(/^\uFEFF/, '')
    .split(/\r?\n\r?\n/);
  const turned = paragraphs.map((_, i) => paragraphs[(i * (2 * seed + 1)) % paragraphs.length]!);
  return Buffer.from(`Book ${seed}\n\n${Array.from({ length: copies }, () => turned.join('\n\n')).join('\n\n')}`);
}

/**
 * Press on Read to the first step's engine call, for the first of three
 * stored novels read alone (the baseline) and for the three read as one set,
 * each in a fresh browser profile holding the same three books.
 */
async function setFirstStep(browser: Browser, url: string, books: Buffer[], asSet: boolean): Promise<number> {
  const context = await browser.newContext();
  const page = await context.newPage();
  await page.goto(`${url}/`);
  await page.getByRole('button', { name: 'Read' }).waitFor();
  await page.evaluate(() => navigator.serviceWorker?.ready);
  await page.getByLabel('Document').setInputFiles(books.map((b, i) => ({ name: `novel-${i + 1}.txt`, mimeType: 'text/plain', buffer: b })));
  await page
    .getByRole('list', { name: 'Books to read, in order' })
    .getByRole('listitem')
    .nth(books.length - 1)
    .waitFor({ timeout: 300_000 });
  // Every book whole in storage, its exact count in: the two reads start from the same state.
  await page.getByText(/^3 books — [^\n]*\d tokens:/).waitFor({ timeout: 300_000 });
  await page.getByRole('button', { name: 'Read' }).and(page.locator(':enabled')).waitFor({ timeout: 300_000 });
  if (!asSet) for (const n of [3, 2]) await page.getByRole('button', { name: `Remove novel-${n}.txt` }).click();
  await page.getByLabel('Question').fill('Where did Victor first see the creature after it left the laboratory?');
  await page.evaluate(() => {
    (window as unknown as { __readAt: number }).__readAt = 0;
    document.addEventListener('submit', () => ((window as unknown as { __readAt: number }).__readAt ||= Date.now()), true);
  });
  await page.getByRole('button', { name: 'Read' }).click();
  await page.waitForFunction(
    () => Number(document.querySelector('[role=progressbar][aria-label="Reading progress"]')?.getAttribute('aria-valuenow')) >= 1,
    undefined,
    { timeout: 120_000 },
  );
  const readAt = await page.evaluate(() => (window as unknown as { __readAt: number }).__readAt);
  const first = await firstStepAt(page);
  await context.close();
  return first - readAt;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** The first step of a set of three novels beside the first step of its first novel read alone, measured in the same run. */
export async function setFirstChunkBench(options: { built?: boolean } = {}): Promise<void> {
  const app = await startApp(PORT + 1, 'dist-bench-first', options);
  try {
    const copies = 7;
    const books = [1, 2, 3].map((seed) => novel(seed, copies));
    const one: number[] = [];
    const set: number[] = [];
    // Alternated, so that a machine busy for a while weighs on both alike.
    for (let i = 0; i < 3; i++) {
      one.push(await setFirstStep(app.browser, app.url, books, false));
      set.push(await setFirstStep(app.browser, app.url, books, true));
    }
    const ms = (n: number) => `${n.toFixed(0).padStart(6)} ms`;
    const mb = (books[0]!.length / 1e6).toFixed(1);
    console.log(`First step of a set of three novels (3 x ${mb} MB, each ${copies} Frankensteins long), app in Chromium, median of 3 fresh profiles`);
    console.log(`  baseline  the first novel read alone: Read to first step  ${ms(median(one))}  (runs: ${one.map((n) => n.toFixed(0)).join(', ')} ms)`);
    console.log(
      `  app       the three read as one set:  Read to first step  ${ms(median(set))}  (runs: ${set.map((n) => n.toFixed(0)).join(', ')} ms; ${(median(set) / median(one)).toFixed(2)}x the baseline)`,
    );
  } finally {
    await app.close();
  }
}

export async function firstChunkBench(): Promise<void> {
  const app = await startApp(PORT, 'dist-bench-first');
  try {
    const novel = await measure(app.browser, app.url, 1);
    const long = await measure(app.browser, app.url, 34);
    const ms = (n: number) => `${n.toFixed(0).padStart(6)} ms`;
    console.log('First chunk after upload, app in Chromium (the press on Read not counted)');
    console.log(`  baseline  3.5M-token book (${long.megabytes.toFixed(1)} MB): whole book counted, in the background  ${ms(long.counted)} after upload`);
    console.log(
      `  app       3.5M-token book: usable ${ms(long.usable)} + Read to first step ${ms(long.toFirst)} = ${ms(long.usable + long.toFirst)}  (${(long.counted / (long.usable + long.toFirst)).toFixed(1)}x sooner than counting first)`,
    );
    console.log(
      `  app       a novel (${novel.megabytes.toFixed(2)} MB, 100K tokens): usable ${ms(novel.usable)} + Read to first step ${ms(novel.toFirst)} = ${ms(novel.usable + novel.toFirst)}  (target <= 300 ms)`,
    );
  } finally {
    await app.close();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  // `--sets`: only the set's first step beside one book's.
  if (process.argv.includes('--sets')) await setFirstChunkBench();
  else await firstChunkBench();
}
