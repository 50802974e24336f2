import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, type Page, test } from '@playwright/test';
import { MAX_FILE_BYTES } from '../src/ingest/ingest';
import { prose } from '../test/fixtures/documents';
import { violationsInBothThemes } from './axe';
import { lockRun, range, releaseRun, storedRecords, storedRevisionIndexes } from './helpers';
import { openPlace } from './places';
import { FACT_1, FACT_2, QUESTION, threeBooks } from './three-books';

/*
 * Several books read as one: chosen on the Read form (files at once, added,
 * ordered by keyboard and by dragging) and in the Library (chosen together,
 * kept as a collection), read with one memory by the extractive engine, and
 * resumed, exported and imported like a run over one book.
 */

const bookList = (page: Page) => page.getByRole('list', { name: 'Books to read, in order' });

/** The books on the Read form, in order, as their list items name them. */
function formOrder(page: Page): Promise<string[]> {
  return bookList(page)
    .getByRole('listitem')
    .evaluateAll((items) => items.map((li) => li.getAttribute('aria-label') ?? ''));
}

async function askAndRead(page: Page, chunkTokens: number): Promise<void> {
  await page.getByLabel('Question').fill(QUESTION);
  await page.getByLabel('Chunk size (tokens)').fill(String(chunkTokens));
  await page.getByLabel('Memory size (tokens)').fill('256');
  await page.getByRole('button', { name: 'Read', exact: true }).click();
}

test('three books chosen at once, ordered by keyboard and by dragging, answer a two-hop question from facts in two of them, every revision naming its book', async ({
  page,
}) => {
  const { harbour, weather, families } = await threeBooks();
  await page.goto('/');
  await expect(page.getByRole('combobox', { name: 'Engine' })).toHaveValue('extractive');
  await page.getByLabel('Document').setInputFiles([weather, families, harbour]);
  await expect(page.getByText(/^3 books — .* tokens: read in this order/)).toBeVisible();
  expect(await formOrder(page)).toEqual(['Book 1 of 3: The Weather Book (weather.epub)', 'Book 2 of 3: families.pdf', 'Book 3 of 3: harbour.txt']);

  // By keyboard: harbour.txt up twice, to the top; the keyboard stays on the book moved.
  await page.getByRole('button', { name: 'Move harbour.txt up' }).focus();
  await page.keyboard.press('Enter');
  await expect(page.getByRole('button', { name: 'Move harbour.txt up' })).toBeFocused();
  await page.keyboard.press('Enter');
  await expect(page.getByRole('button', { name: 'Move harbour.txt down' })).toBeFocused();
  await expect(page.getByText('harbour.txt is now book 1 of 3.')).toBeAttached();
  // By dragging: families.pdf onto The Weather Book, which it then comes before.
  await bookList(page)
    .getByRole('listitem', { name: /families\.pdf/ })
    .dragTo(bookList(page).getByRole('listitem', { name: /weather\.epub/ }));
  expect(await formOrder(page)).toEqual(['Book 1 of 3: harbour.txt', 'Book 2 of 3: families.pdf', 'Book 3 of 3: The Weather Book (weather.epub)']);
  await bookList(page)
    .getByRole('listitem', { name: /weather\.epub/ })
    .dragTo(bookList(page).getByRole('listitem', { name: /families\.pdf/ }));
  expect(await formOrder(page)).toEqual(['Book 1 of 3: harbour.txt', 'Book 2 of 3: The Weather Book (weather.epub)', 'Book 3 of 3: families.pdf']);

  await askAndRead(page, 300);
  const answer = page.getByRole('region', { name: 'Answer' });
  await expect(answer).toContainText('Orrin Vale', { timeout: 60_000 });
  await expect(answer).toContainText('Port Meridian');
  const run = page.getByRole('region', { name: 'Run' });
  await expect(run.getByRole('list', { name: 'Books of this run, in reading order' }).getByRole('listitem')).toHaveText([
    'harbour.txt',
    'The Weather Book',
    'families.pdf',
  ]);

  // Every revision names its book: the chart marks where each starts, the timeline and the section pane name it.
  const progress = page.getByRole('progressbar', { name: 'Reading progress' });
  const max = Number(await progress.getAttribute('aria-valuemax'));
  const chart = page.getByRole('img', { name: /Memory size and change/ });
  const marks = /book starts marked: harbour\.txt \(1\), The Weather Book \((\d+)\), families\.pdf \((\d+)\)/.exec((await chart.getAttribute('aria-label'))!);
  expect(marks).not.toBeNull();
  const [second, third] = [Number(marks![1]), Number(marks![2])];
  expect(1 < second && second < third && third <= max).toBe(true);
  const timeline = page.getByRole('list', { name: 'Memory revisions' });
  await timeline.getByRole('listitem').first().getByRole('button').click();
  const section = page.getByRole('region', { name: 'Section', exact: true });
  for (let k = 1; k <= max; k++) {
    const book = k < second ? 'harbour.txt' : k < third ? 'The Weather Book' : 'families.pdf';
    await expect(timeline.getByRole('listitem', { name: new RegExp(`^Revision ${k}:.*, ${book}( ·|,)`) })).toBeAttached();
    await expect(section).toContainText(`Section ${k} of ${max} · ${book}`);
    if (k === second) {
      await expect(section).toContainText(`Section ${k} of ${max} · The Weather Book · Chapter 1: Rain`);
      // The section pane shows the text as prose: the book header's line breaks are joined.
      await expect(section.locator('pre')).toContainText(/^Document 2: The Weather Book /);
    }
    if (k < max) await page.keyboard.press('ArrowDown');
  }
  // Search memories says which book a match was first written from.
  await page.getByLabel('Search memories').fill('Port Meridian');
  await expect(page.getByText(/first written at revision \d+ \(families\.pdf · p\. 2\)/)).toBeVisible();
  // The form's list of books, the run's books and the chart's book starts: nothing serious for axe, in either theme.
  expect(await violationsInBothThemes(page, 'Read, a set')).toEqual([]);
});

test('a reload in the middle of the second book resumes from the next chunk, to the answer an uninterrupted read gives', async ({ page }) => {
  test.setTimeout(180_000);
  const { harbour, weather, families } = await threeBooks();
  await page.goto('/');
  await page.getByLabel('Document').setInputFiles([harbour, weather, families]);
  await expect(bookList(page).getByRole('listitem')).toHaveCount(3);
  // The run is held, by a read of storage that stays open, once two chunks of the second book are stored.
  await page.evaluate(holdInSecondBook);
  await askAndRead(page, 100);
  await page.waitForFunction(() => {
    const hold = (window as unknown as { __hold?: Hold }).__hold;
    return hold?.held !== undefined;
  });
  const held = (await page.evaluate(() => (window as unknown as { __hold: Hold }).__hold.held))!;
  expect(held.inSecond).toBe(2);

  // The reloaded page's first script takes the run's lock: the worker waits until the test has looked.
  await page.addInitScript(lockRun, held.runId);
  await page.reload();
  const progress = page.getByRole('progressbar', { name: 'Reading progress' });
  await expect(page.getByText(/^Reading ·/)).toBeVisible();
  const [stored] = await storedRecords<{ id: string; nextChunk: number; books: { start: number; end: number }[] }>(page, 'runs');
  // The step in hand when the page went away may have been stored: the run is at the held chunk or the one after it.
  expect([held.nextChunk, held.nextChunk + 1]).toContain(stored!.nextChunk);
  await expect(progress).toHaveAttribute('aria-valuenow', String(stored!.nextChunk));
  expect((await storedRevisionIndexes(page))[held.runId]).toEqual(range(stored!.nextChunk));
  // The newest revision is in the second book.
  await expect(page.getByRole('region', { name: 'Section', exact: true })).toContainText(`Section ${stored!.nextChunk} of`);
  await expect(page.getByRole('region', { name: 'Section', exact: true })).toContainText('· The Weather Book · Chapter 1: Rain');

  await releaseRun(page);
  await expect(page.getByRole('region', { name: 'Answer' })).toContainText('Port Meridian', { timeout: 60_000 });
  const max = Number(await progress.getAttribute('aria-valuemax'));
  await expect(progress).toHaveAttribute('aria-valuenow', String(max));
  expect((await storedRevisionIndexes(page))[held.runId]).toEqual(range(max));

  // The same question read again without a reload: the same memories, one for each chunk, and the same answer.
  await page.getByLabel('Document').setInputFiles([harbour, weather, families]);
  await expect(bookList(page).getByRole('listitem')).toHaveCount(3);
  await askAndRead(page, 100);
  await expect.poll(async () => (await storedRecords<{ status: string }>(page, 'runs')).map((r) => r.status), { timeout: 60_000 }).toEqual(['done', 'done']);
  const memories = await storedRecords<{ runId: string; index: number; memory: string }>(page, 'memories');
  const runs = await storedRecords<{ id: string; answer: string }>(page, 'runs');
  const other = runs.find((r) => r.id !== held.runId)!;
  const of = (id: string) => memories.filter((m) => m.runId === id).map((m) => m.memory);
  expect(of(held.runId)).toHaveLength(max);
  expect(of(held.runId)).toEqual(of(other.id));
  expect(runs.find((r) => r.id === held.runId)!.answer).toBe(other.answer);

  // Compare offers the other run over the same books in the same order, chunk for chunk.
  await page.getByLabel('Compare with').selectOption({ index: 1 });
  await page.getByRole('slider', { name: 'Revision' }).fill('3');
  const comparison = page.getByRole('region', { name: 'Comparison' });
  await expect(comparison).toContainText('memory after chunk 3');
  await expect(comparison.locator('pre')).toHaveText(of(held.runId)[2]!);
});

test('a set-run exports, and an import finds its books by their content and says which one is missing', async ({ page, browser }, info) => {
  const { harbour, weather, families } = await threeBooks();
  await page.goto('/');
  await page.getByLabel('Document').setInputFiles([harbour, weather, families]);
  await expect(bookList(page).getByRole('listitem')).toHaveCount(3);
  await askAndRead(page, 300);
  await expect(page.getByRole('region', { name: 'Answer' })).toContainText('Port Meridian', { timeout: 60_000 });
  const max = Number(await page.getByRole('progressbar', { name: 'Reading progress' }).getAttribute('aria-valuemax'));
  const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Export JSON' }).click()]);
  const path = info.outputPath('set-run.json');
  await download.saveAs(path);
  const data = JSON.parse(readFileSync(path, 'utf8')) as { run: { books: { name: string; sha256: string }[] } };
  expect(data.run.books.map((b) => b.name)).toEqual(['harbour.txt', 'weather.epub', 'families.pdf']);
  expect(data.run.books.every((b) => /^[0-9a-f]{64}$/.test(b.sha256))).toBe(true);

  // Another browser holds the first and third books, under other names: they are found by their content.
  const context = await browser.newContext();
  const fresh = await context.newPage();
  await fresh.goto('/');
  await fresh.getByLabel('Document').setInputFiles([
    { ...harbour, name: 'renamed-harbour.txt' },
    { ...families, name: 'renamed-families.pdf' },
  ]);
  await expect(bookList(fresh).getByRole('listitem')).toHaveCount(2);
  await openPlace(fresh, 'Library');
  await fresh.getByLabel('Import run').setInputFiles(path);
  await expect(fresh.getByRole('region', { name: 'Answer' })).toContainText('Port Meridian');
  const books = fresh.getByRole('list', { name: 'Books of this run, in reading order' }).getByRole('listitem');
  await expect(books).toHaveText(['harbour.txt', 'The Weather Book — not in this browser', 'families.pdf']);
  await expect(fresh.getByRole('note').filter({ hasText: 'not in this browser' })).toHaveText(/^1 book of this run is not in this browser/);

  // A revision of the first book shows its section; one of the missing book says which book to add.
  const section = fresh.getByRole('region', { name: 'Section', exact: true });
  const slider = fresh.getByRole('slider', { name: 'Revision' });
  await slider.fill('1');
  await expect(section).toContainText(`Section 1 of ${max} · harbour.txt`);
  await expect(section.locator('pre')).toContainText(/^Document 1: harbour /);
  const chart = fresh.getByRole('img', { name: /Memory size and change/ });
  const second = Number(/The Weather Book \((\d+)\)/.exec((await chart.getAttribute('aria-label'))!)![1]);
  await slider.fill(String(second));
  await expect(section).toContainText('This browser does not have "The Weather Book", the book this section is in');

  // Adding the missing book shows its sections.
  await openPlace(fresh, 'Read');
  await fresh.getByLabel('Add books').setInputFiles(weather);
  await expect(bookList(fresh).getByRole('listitem')).toHaveCount(3);
  await expect(books).toHaveText(['harbour.txt', 'The Weather Book', 'families.pdf']);
  await expect(section.locator('pre')).toContainText(/^Document 2: The Weather Book /);
  await context.close();
});

test('books chosen in the Library are read together, kept as a collection, read again from it, and the collection deleted without its books', async ({
  page,
}) => {
  const { harbour, weather, families } = await threeBooks();
  await page.goto('/');
  await page.getByLabel('Document').setInputFiles([harbour, weather, families]);
  await expect(bookList(page).getByRole('listitem')).toHaveCount(3);
  await openPlace(page, 'Library');
  const library = page.getByRole('list', { name: 'Books' });
  await library.getByRole('checkbox', { name: 'Choose families.pdf' }).check();
  await library.getByRole('checkbox', { name: 'Choose harbour.txt' }).check();
  await expect(page.getByText('2 books chosen, in this reading order: families.pdf, harbour.txt')).toBeVisible();
  await page.getByRole('button', { name: 'Read these together' }).click();
  await expect(page.getByRole('heading', { level: 1, name: 'Read a book' })).toBeVisible();
  expect(await formOrder(page)).toEqual(['Book 1 of 2: families.pdf', 'Book 2 of 2: harbour.txt']);
  // A book from the Library joins the set on the Read form; one is removed.
  await page.getByLabel('Add a book from the Library').selectOption({ label: 'The Weather Book (weather.epub)' });
  await page.getByRole('button', { name: 'Add', exact: true }).click();
  expect(await formOrder(page)).toEqual(['Book 1 of 3: families.pdf', 'Book 2 of 3: harbour.txt', 'Book 3 of 3: The Weather Book (weather.epub)']);
  await page.getByRole('button', { name: 'Remove The Weather Book (weather.epub)' }).click();
  expect(await formOrder(page)).toEqual(['Book 1 of 2: families.pdf', 'Book 2 of 2: harbour.txt']);

  await openPlace(page, 'Library');
  await library.getByRole('checkbox', { name: 'Choose weather.epub' }).check();
  await page.getByLabel('Collection name').fill('Gull Rock papers');
  await page.getByRole('button', { name: 'Save as collection' }).click();
  const collections = page.getByRole('list', { name: 'Collections' });
  await expect(collections.getByRole('listitem', { name: 'Gull Rock papers' })).toContainText('3 books: families.pdf, harbour.txt, weather.epub');
  // The choice and the collections: nothing serious for axe, in either theme.
  expect(await violationsInBothThemes(page, 'Library, a choice and a collection')).toEqual([]);

  // Kept across a reload, and read from again for a later question.
  await page.reload();
  await collections.getByRole('listitem', { name: 'Gull Rock papers' }).getByRole('button', { name: 'Read this collection' }).click();
  expect(await formOrder(page)).toEqual(['Book 1 of 3: families.pdf', 'Book 2 of 3: harbour.txt', 'Book 3 of 3: The Weather Book (weather.epub)']);
  await askAndRead(page, 300);
  await expect(page.getByRole('region', { name: 'Answer' })).toContainText('Port Meridian', { timeout: 60_000 });

  // The run is listed under each of its books; deleting the collection leaves the books and the run.
  await openPlace(page, 'Library');
  for (const name of ['harbour.txt', 'weather.epub', 'families.pdf']) {
    await expect(page.getByRole('list', { name: `Runs of ${name}` })).toContainText(QUESTION);
  }
  const kept = collections.getByRole('listitem', { name: 'Gull Rock papers' });
  await kept.getByRole('button', { name: 'Delete collection' }).click();
  await kept.getByRole('group', { name: 'Confirm delete collection' }).getByRole('button', { name: 'Yes, delete collection' }).click();
  await expect(page.getByText('No collections yet')).toBeVisible();
  for (const name of ['harbour.txt', 'weather.epub', 'families.pdf']) await expect(library.getByRole('listitem', { name, exact: true })).toBeVisible();
  expect(await storedRecords(page, 'documents')).toHaveLength(3);
  expect(await storedRecords(page, 'runs')).toHaveLength(1);
});

test('several files dropped at once are all imported into the Read form, in order; one over the size limit is named and the others kept', async ({ page }) => {
  const { harbour, weather, families } = await threeBooks();
  await page.goto('/');
  await page.getByRole('button', { name: 'Read', exact: true }).waitFor();
  const drop = await page.evaluateHandle(
    (files) => {
      const data = new DataTransfer();
      for (const f of files) data.items.add(new File([new Uint8Array(f.bytes)], f.name, { type: f.mimeType }));
      return data;
    },
    [families, harbour, weather].map((f) => ({ name: f.name, mimeType: f.mimeType, bytes: [...f.buffer] })),
  );
  await page.locator('.app').dispatchEvent('drop', { dataTransfer: drop });
  await expect(bookList(page).getByRole('listitem')).toHaveCount(3);
  expect(await formOrder(page)).toEqual(['Book 1 of 3: families.pdf', 'Book 2 of 3: harbour.txt', 'Book 3 of 3: The Weather Book (weather.epub)']);
  expect(await storedRecords(page, 'documents')).toHaveLength(3);

  // The limit is per book: a file over it is refused by name, and the book chosen with it joins the set.
  const dir = mkdtempSync(join(tmpdir(), 'memagent-set-over-'));
  const over = join(dir, 'over.txt');
  // A sparse file: its size is all that is looked at.
  closeSync(openSync(over, 'w'));
  truncateSync(over, MAX_FILE_BYTES + 1);
  try {
    const notes = join(dir, 'notes.txt');
    writeFileSync(notes, prose(9, 20));
    await page.getByLabel('Add books').setInputFiles([over, notes]);
    await expect(page.getByRole('alert')).toContainText(
      'over.txt could not be added: "over.txt" is 268,435,457 bytes; the largest file this app reads is 256 MB',
    );
    await expect(bookList(page).getByRole('listitem')).toHaveCount(4);
    expect(await formOrder(page)).toContain('Book 4 of 4: notes.txt');
    expect(await storedRecords(page, 'documents')).toHaveLength(4);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a set of 100 small documents, chosen at once, is read a document a step and answers from facts in two of them', async ({ page }) => {
  test.setTimeout(240_000);
  const notes = Array.from({ length: 100 }, (_, i) => {
    const fact = i === 36 ? ` ${FACT_1}` : i === 80 ? ` ${FACT_2}` : '';
    const text = `Note ${i + 1}. The tide table for pier ${i + 1} was checked on day ${200 + i}.${fact} The lamp was trimmed at dusk.`;
    return { name: `note-${String(i + 1).padStart(3, '0')}.txt`, mimeType: 'text/plain', buffer: Buffer.from(text) };
  });
  await page.goto('/');
  await page.getByLabel('Document').setInputFiles(notes);
  await expect(page.getByText(/^100 books — /)).toBeVisible({ timeout: 180_000 });
  await expect(bookList(page).getByRole('listitem')).toHaveCount(100);
  expect((await formOrder(page)).at(-1)).toBe('Book 100 of 100: note-100.txt');
  await page.getByLabel('Question').fill(QUESTION);
  await page.getByRole('button', { name: 'Read', exact: true }).click();
  await expect(page.getByRole('region', { name: 'Answer' })).toContainText('Port Meridian', { timeout: 60_000 });
  await expect(page.getByRole('region', { name: 'Answer' })).toContainText('Orrin Vale');
  await expect(page.getByRole('region', { name: 'Run' }).getByText(/^note-001\.txt and 99 more books · 100 chunks/)).toBeVisible();
  const progress = page.getByRole('progressbar', { name: 'Reading progress' });
  await expect(progress).toHaveAttribute('aria-valuemax', '100');
  await expect(progress).toHaveAttribute('aria-valuenow', '100');
  await expect(page.getByRole('img', { name: /the start of each of 100 books is marked/ })).toBeVisible();
  const [run] = await storedRecords<{ id: string; books: { start: number; end: number }[] }>(page, 'runs');
  const revisions = await storedRecords<{ index: number; start: number; end: number }>(page, 'revisions');
  // Each document is read in a step of its own, from its header to its end.
  expect(revisions.map((r) => [r.start, r.end])).toEqual(run!.books.map((b) => [b.start, b.end]));
  await page.getByLabel('Search memories').fill('Port Meridian');
  await expect(page.getByText(/first written at revision 81 \(note-081\.txt\)/)).toBeVisible();
});

/** What holdInSecondBook leaves in the page once it holds the run. */
interface Hold {
  held?: { runId: string; nextChunk: number; inSecond: number };
}

/**
 * In the page: reads storage over and over until the run over a set has
 * stored two chunks of its second book, then keeps that read open, so that
 * the run's next revision cannot be written. A write waits for the read
 * before it, and the next read waits for the write: the reads see every
 * revision the run stores, one at a time.
 */
function holdInSecondBook(): void {
  const hold: Hold = {};
  (window as unknown as { __hold: Hold }).__hold = hold;
  const open = indexedDB.open('memagent');
  open.onsuccess = () => {
    const db = open.result;
    const poll = () => {
      const tx = db.transaction(['runs', 'runChunks'], 'readonly');
      const runs = tx.objectStore('runs').getAll();
      const chunks = tx.objectStore('runChunks').getAll();
      chunks.onsuccess = () => {
        const run = (runs.result as { id: string; status: string; nextChunk: number; books?: { start: number; end: number }[] }[]).find(
          (r) => r.books && r.status === 'running',
        );
        const spans = run && (chunks.result as { runId: string; spans: Uint32Array }[]).find((c) => c.runId === run.id)?.spans;
        if (run && spans) {
          const second = run.books![1]!;
          let inSecond = 0;
          for (let i = 0; i < run.nextChunk; i++) if (spans[i * 3]! >= second.start && spans[i * 3]! < second.end) inSecond++;
          if (inSecond >= 2) {
            hold.held = { runId: run.id, nextChunk: run.nextChunk, inSecond };
            const keep = () => (tx.objectStore('runs').get(run.id).onsuccess = keep);
            return keep();
          }
        }
        poll();
      };
    };
    poll();
  };
}
