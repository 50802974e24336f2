import { expect, test } from './fixtures';
import { addBook, download, expectAnswer, fileFor, held, holdAfter, openPlace, progress, read, release, stepUntil, stored } from './app';
import { expectAttribute, expectCount, expectNoText, expectText } from './screen';
import { PLANTED, plantedBook, range } from '../e2e/helpers';
import { bookPages, FACT, makeEpub, makePdf } from '../test/fixtures/documents';

const FOLLOW_UP = 'Which code opens the Marlowe archive vault?';

/**
 * A book's whole life in one browser: a read interrupted by a reload, a read
 * paused and resumed, a follow-up question, the inspector by keyboard, an
 * export, the book deleted and the run imported back; and books in EPUB and PDF.
 * One Read press makes one run, each chunk is stored once.
 */
test('a book is read through a reload and a pause, questioned, inspected, exported, deleted and imported back', async ({ tab, ui: page }, info) => {
  await tab.goto('/');
  await expect.poll(() => page.getByRole('combobox', { name: 'Engine' }).inputValue()).toBe('extractive');
  await addBook(page, fileFor(info.outputPath('frankenstein.txt'), plantedBook(0.6)), 'frankenstein.txt');

  // A reload in the middle of a step: the run waits at its fourth revision's commit while the page goes.
  await holdAfter(tab, 3);
  await read(page, PLANTED.question);
  expect(await held(tab)).toBe(3);
  expect((await progress(page)).now).toBeLessThanOrEqual(3);
  await tab.reload();
  await expectAnswer(page, PLANTED.code);
  // The plan may still have been growing at the reload (chunks are planned as the book is cut): the finished run's count.
  const first = await progress(page);
  expect(first.max).toBeGreaterThan(10);
  await expectAttribute(page.getByRole('progressbar', { name: 'Reading progress' }), 'aria-valuenow', String(first.max));
  // Every chunk stored once, and one run for one press.
  expect(Object.values(await stored.revisionIndexes(tab))).toEqual([range(first.max)]);
  await openPlace(page, 'Library');
  const runs = page.getByRole('region', { name: 'Library' }).getByRole('list', { name: 'Runs of frankenstein.txt' }).getByRole('listitem');
  await expectCount(runs, 1);

  // Pause in the middle of a step, a reload, then Resume.
  const library = page.getByRole('region', { name: 'Library' });
  const entry = library.getByRole('listitem', { name: 'frankenstein.txt' });
  // The form took the run's book back with the page: the Library marks it as the form's, and Read reads it again.
  await expectAttribute(entry, 'aria-current', 'true');
  await openPlace(page, 'Read');
  await page.getByText('frankenstein.txt — ').waitFor();
  await holdAfter(tab, 2);
  await read(page, PLANTED.question);
  expect(await held(tab)).toBe(2);
  const pause = page.getByRole('button', { name: 'Pause' });
  const heldAt = await stepUntil(tab, async () => (await pause.count()) === 1);
  expect(heldAt).toBeLessThan(12);
  await pause.click();
  // The pause is stored after the held step's commit, which is stored whole; then the run stops.
  await release(tab);
  await page.getByRole('button', { name: 'Resume' }).waitFor();
  await expect.poll(async () => (await stored.records<{ status: string }>(tab, 'runs')).map((r) => r.status).sort()).toEqual(['done', 'paused']);
  await tab.reload();
  await page.getByRole('button', { name: 'Resume' }).waitFor();
  // Paused after the held step or the one after it, every revision before it stored once, as the page shows.
  const pausedRun = Object.values(await stored.revisionIndexes(tab)).find((indexes) => indexes.length < first.max)!;
  expect(pausedRun).toEqual(range(pausedRun.length));
  expect(pausedRun.length).toBeGreaterThanOrEqual(heldAt);
  await expectAttribute(page.getByRole('progressbar', { name: 'Reading progress' }), 'aria-valuenow', String(pausedRun.length));
  await page.getByRole('button', { name: 'Resume' }).click();
  await expectAnswer(page, PLANTED.code);
  await expectAttribute(page.getByRole('progressbar', { name: 'Reading progress' }), 'aria-valuenow', String(first.max));
  expect(Object.values(await stored.revisionIndexes(tab))).toEqual([range(first.max), range(first.max)]);
  await openPlace(page, 'Library');
  await expectCount(runs, 2);

  // A follow-up question to the finished memory.
  await openPlace(page, 'Read');
  await expectAnswer(page, PLANTED.code);
  await page.getByRole('textbox', { name: 'Ask this memory' }).fill(FOLLOW_UP);
  await page.getByRole('button', { name: 'Ask' }).click();
  const followUp = page.getByRole('list', { name: 'Follow-up answers' }).getByRole('listitem');
  await expectText(followUp, FOLLOW_UP);
  await expectText(followUp, PLANTED.code);

  // The inspector: search, jump to the first match, then step back with the keyboard.
  await page.getByLabel('Search memories').fill(PLANTED.code);
  const hint = page.getByText(/first written at revision \d+/);
  const k = Number(/revision (\d+)/.exec(await hint.text())![1]);
  await page.getByRole('button', { name: 'Go to first match' }).click();
  const section = page.getByRole('region', { name: 'Section', exact: true });
  const memory = page.getByRole('region', { name: 'Memory', exact: true });
  await expectText(section, `Section ${k} of ${first.max}`);
  await expectText(section, PLANTED.sentence);
  await expectText(memory, PLANTED.code);
  const revisions = page.getByRole('list', { name: 'Memory revisions' });
  await revisions
    .getByRole('listitem', { name: new RegExp(`^Revision ${k}:`) })
    .getByRole('button')
    .click();
  await tab.press('ArrowUp');
  await expectText(section, `Section ${k - 1} of ${first.max}`);
  await expectNoText(memory, PLANTED.code);
  await expect
    .poll(() =>
      revisions
        .getByRole('listitem', { name: new RegExp(`^Revision ${k - 1}:`) })
        .getByRole('button')
        .isFocused(),
    )
    .toBe(true);
  await tab.press('End');
  await expectText(section, `Section ${first.max} of ${first.max}`);

  // Export JSON holds every revision.
  const exported = await download(tab, page.getByRole('button', { name: 'Export JSON' }));
  expect(exported.name).toMatch(/\.json$/);
  const data = JSON.parse(exported.text) as { run: { question: string }; revisions: { index: number }[]; followUps: unknown[] };
  expect(data.run.question).toBe(PLANTED.question);
  expect(data.revisions.map((r) => r.index)).toEqual(range(first.max));
  expect(data.followUps).toHaveLength(1);

  // Delete the book (and its runs) from the Library, then import the run back: it opens without its book.
  await openPlace(page, 'Library');
  await entry.getByRole('button', { name: 'Delete' }).click();
  await entry.getByRole('button', { name: 'Yes, delete' }).click();
  await expectCount(entry, 0);
  await expect.poll(async () => (await stored.counts(tab)).runs ?? 0).toBe(0);
  await page.getByLabel('Import run').upload(fileFor(info.outputPath('run.json'), exported.text));
  await expectAnswer(page, PLANTED.code);
  await expectAttribute(page.getByRole('progressbar', { name: 'Reading progress' }), 'aria-valuenow', String(first.max));
  await expectText(page.getByRole('region', { name: 'Section', exact: true }), 'does not have the book');
  expect((await stored.counts(tab)).runs).toBe(1);

  // The first visit was reloaded while the app was being stored for offline use: that is no new version to offer.
  await tab.evaluate(() => navigator.serviceWorker.ready.then(() => true));
  await expectCount(page.getByRole('status', { name: 'App update' }), 0);

  // EPUB and PDF books, read to their planted fact.
  await openPlace(page, 'Read');
  for (const [name, bytes] of [
    ['marlowe.epub', makeEpub()],
    ['marlowe.pdf', await makePdf(bookPages())],
  ] as const) {
    await addBook(page, fileFor(info.outputPath(name), bytes), name);
    await read(page, FACT.question);
    await expectAnswer(page, FACT.code);
  }
  await openPlace(page, 'Library');
  await expectText(library.getByRole('listitem', { name: 'marlowe.pdf' }), 'PDF · ');
  await expectText(library.getByRole('listitem', { name: 'marlowe.epub' }), 'EPUB · ');
});
