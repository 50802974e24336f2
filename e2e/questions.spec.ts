import { expect, type Page, test } from '@playwright/test';
import { startOpenAIServer } from '../test/support/openai-server';
import { PLANTED, plantedBook, range, storedRevisionIndexes, storedRunsAndRevisions } from './helpers';
import { openPlace } from './places';

const SECOND = {
  sentence: 'The ferry to Carrow Island leaves from pier 17.',
  question: 'From which pier does the ferry to Carrow Island leave?',
  answer: 'pier 17',
};

/** Frankenstein with both planted facts: the ferry at a third of the book, the vault code at 60 %. */
function twoFactBook(): Buffer {
  const book = plantedBook(0.6).toString('latin1');
  const at = book.indexOf('\r\n\r\n', Math.floor(book.length * 0.3));
  return Buffer.from(`${book.slice(0, at)}\r\n\r\n${SECOND.sentence}${book.slice(at)}`, 'latin1');
}

interface StoredRun {
  id: string;
  question: string;
  status: string;
  nextChunk: number;
}

/** Runs and their revisions' commit times, as stored, read in the page. */
async function stored(page: Page): Promise<{ runs: StoredRun[]; committed: Record<string, number[]> }> {
  const { runs, revisions } = await storedRunsAndRevisions<StoredRun, { runId: string; committedAt: number }>(page);
  const committed: Record<string, number[]> = {};
  for (const r of revisions) (committed[r.runId] ??= []).push(r.committedAt);
  return { runs, committed };
}

async function askTwo(page: Page, book: Buffer, name: string): Promise<void> {
  await page.getByLabel('Document').setInputFiles({ name, mimeType: 'text/plain', buffer: book });
  await page.getByText(new RegExp(`${name.replace('.', '\\.')} — .*tokens`)).waitFor();
  await page.getByLabel('Question', { exact: true }).fill(PLANTED.question);
  await page.getByRole('button', { name: 'Add a question' }).click();
  // The new box has the keyboard.
  await expect(page.getByLabel('Question 2', { exact: true })).toBeFocused();
  await page.keyboard.type(SECOND.question);
}

test('two questions on one book: both runs read in turns, one paused while the other finishes, resumed after a reload', async ({ page }) => {
  await page.goto('/');
  await askTwo(page, twoFactBook(), 'frankenstein.txt');
  // A third box can be added and removed again.
  await page.getByRole('button', { name: 'Add a question' }).click();
  await expect(page.getByLabel('Question 3', { exact: true })).toBeFocused();
  await page.getByRole('button', { name: 'Remove question 3' }).click();
  await expect(page.getByLabel('Question 3', { exact: true })).toHaveCount(0);
  await expect(page.getByLabel('Question 2', { exact: true })).toHaveValue(SECOND.question);
  await page.getByRole('spinbutton', { name: 'Chunk size (tokens)' }).fill('400');
  await page.getByRole('button', { name: 'Read' }).click();

  // The runs are listed in the Library, each with its own progress.
  await openPlace(page, 'Library');
  const runs = page.getByRole('navigation', { name: 'Runs' });
  const first = runs.getByRole('progressbar', { name: `Progress: ${PLANTED.question}` });
  const second = runs.getByRole('progressbar', { name: `Progress: ${SECOND.question}` });
  // Both make progress, each with its own bar.
  await expect.poll(async () => Number(await second.getAttribute('aria-valuenow'))).toBeGreaterThanOrEqual(5);
  expect(Number(await first.getAttribute('aria-valuenow'))).toBeGreaterThanOrEqual(4);

  // Pause the second question's run from its own view; the first reads on to its answer.
  await runs.getByRole('button', { name: SECOND.question }).click();
  await expect(page.getByRole('region', { name: 'Run' }).getByRole('heading', { name: SECOND.question })).toBeVisible();
  await page.getByRole('button', { name: 'Pause' }).click();
  await expect(page.getByRole('button', { name: 'Resume' })).toBeVisible();
  await openPlace(page, 'Library');
  await runs.getByRole('button', { name: PLANTED.question }).click();
  await expect(page.getByRole('region', { name: 'Answer' })).toContainText(PLANTED.code, { timeout: 90_000 });

  const { runs: records, committed } = await stored(page);
  const a = records.find((r) => r.question === PLANTED.question)!;
  const b = records.find((r) => r.question === SECOND.question)!;
  expect(a.status).toBe('done');
  expect(b.status).toBe('paused');
  await openPlace(page, 'Library');
  const total = Number(await first.getAttribute('aria-valuemax'));
  expect(total).toBeGreaterThan(100);
  expect(b.nextChunk).toBeLessThan(total);
  // Turns: while both were reading, each stored about as many revisions as the other.
  const aTimes = committed[a.id]!;
  const bTimes = committed[b.id]!;
  const from = Math.max(aTimes[0]!, bTimes[0]!);
  const to = bTimes.at(-1)!;
  const inWindow = (times: number[]) => times.filter((t) => t >= from && t <= to).length;
  expect(inWindow(bTimes)).toBeGreaterThanOrEqual(4);
  expect(Math.abs(inWindow(aTimes) - inWindow(bTimes))).toBeLessThanOrEqual(3);

  // After a reload the paused run stays paused until Resume, then reads on to its own answer.
  await page.reload();
  await openPlace(page, 'Library');
  await runs.getByRole('button', { name: SECOND.question }).click();
  await expect(page.getByRole('button', { name: 'Resume' })).toBeVisible();
  expect((await stored(page)).runs.find((r) => r.id === b.id)!.nextChunk).toBe(b.nextChunk);
  await page.getByRole('button', { name: 'Resume' }).click();
  await expect(page.getByRole('region', { name: 'Answer' })).toContainText(SECOND.answer, { timeout: 90_000 });
  const indexes = await storedRevisionIndexes(page);
  expect(indexes[a.id]).toEqual(range(total));
  expect(indexes[b.id]).toEqual(range(total));
});

test('two questions through an OpenAI-compatible server are read at once', async ({ page }) => {
  const pagePort = Number(process.env.E2E_PORT ?? 4173);
  // A server of its own, whose replies take a moment per token, so that requests in flight overlap.
  const server = await startOpenAIServer({ allowedOrigin: `http://127.0.0.1:${pagePort}`, tokenDelayMs: 4 });
  try {
    await page.goto('/');
    await page.getByRole('combobox', { name: 'Engine' }).selectOption({ label: 'OpenAI-compatible server' });
    await page.getByLabel('Base URL', { exact: true }).fill(server.url);
    await page.getByRole('button', { name: 'Connect' }).click();
    await expect(page.getByRole('status').filter({ hasText: 'Connected' })).toBeVisible();
    // About a tenth of the book, both facts in it.
    const text = twoFactBook().toString('latin1');
    const from = text.indexOf(SECOND.sentence) - 20_000;
    const short = `${text.slice(from, text.indexOf(SECOND.sentence) + 20_000)}\r\n\r\n${PLANTED.sentence}\r\n`;
    await askTwo(page, Buffer.from(short, 'latin1'), 'excerpt.txt');
    await page.getByRole('spinbutton', { name: 'Chunk size (tokens)' }).fill('1000');
    await page.getByRole('spinbutton', { name: 'Memory size (tokens)' }).fill('64');
    await page.getByRole('button', { name: 'Read' }).click();
    await openPlace(page, 'Library');
    const runs = page.getByRole('navigation', { name: 'Runs' });
    for (const q of [PLANTED.question, SECOND.question]) {
      await expect(runs.getByRole('progressbar', { name: `Progress: ${q}` })).toHaveAttribute('aria-valuetext', /, done$/, { timeout: 60_000 });
    }
    expect(server.maxInFlight).toBe(2);
    await runs.getByRole('button', { name: SECOND.question }).click();
    await expect(page.getByRole('region', { name: 'Answer' })).toContainText(SECOND.answer);
  } finally {
    await server.stop();
  }
});
