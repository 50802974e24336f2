import { expect, type Page, test } from '@playwright/test';
import { connectServer, ownOpenAIServer, PLANTED, plantedBook, range, storedRevisionIndexes, storedRunsAndRevisions, withOwnServer } from './helpers';
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

/** A question's answer as the page for its read shows it: in its entry among the read's questions. */
function answerOf(page: Page, question: string) {
  return page.getByRole('region', { name: 'Questions of this read' }).getByRole('article', { name: question });
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

test('two questions on one book: on this device the runs read in turns, each to its own answer', async ({ page }) => {
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

  // The runs are listed in the Library, each with its own progress, and both read to the end.
  await openPlace(page, 'Library');
  const runs = page.getByRole('navigation', { name: 'Runs' });
  for (const q of [PLANTED.question, SECOND.question]) {
    await expect(runs.getByRole('progressbar', { name: `Progress: ${q}` })).toHaveAttribute('aria-valuetext', /, done$/, { timeout: 90_000 });
  }
  const total = Number(await runs.getByRole('progressbar', { name: `Progress: ${PLANTED.question}` }).getAttribute('aria-valuemax'));
  expect(total).toBeGreaterThan(100);

  // Turns: while both were reading, each stored about as many revisions as the other.
  const { runs: records, committed } = await stored(page);
  const a = records.find((r) => r.question === PLANTED.question)!;
  const b = records.find((r) => r.question === SECOND.question)!;
  const from = Math.max(committed[a.id]![0]!, committed[b.id]![0]!);
  const to = Math.min(committed[a.id]!.at(-1)!, committed[b.id]!.at(-1)!);
  const inWindow = (times: number[]) => times.filter((t) => t >= from && t <= to).length;
  expect(inWindow(committed[b.id]!)).toBeGreaterThan(total / 2);
  expect(Math.abs(inWindow(committed[a.id]!) - inWindow(committed[b.id]!))).toBeLessThanOrEqual(3);

  // Each answers its own question.
  await runs.getByRole('button', { name: SECOND.question }).click();
  await expect(answerOf(page, SECOND.question)).toContainText(SECOND.answer);
  await openPlace(page, 'Library');
  await runs.getByRole('button', { name: PLANTED.question }).click();
  await expect(answerOf(page, PLANTED.question)).toContainText(PLANTED.code);
  const indexes = await storedRevisionIndexes(page);
  expect(indexes[a.id]).toEqual(range(total));
  expect(indexes[b.id]).toEqual(range(total));
});

/** About a tenth of the two-fact book, both facts in it: a read through a server in seconds. */
function twoFactExcerpt(): Buffer {
  const text = twoFactBook().toString('latin1');
  const from = text.indexOf(SECOND.sentence) - 20_000;
  return Buffer.from(`${text.slice(from, text.indexOf(SECOND.sentence) + 20_000)}\r\n\r\n${PLANTED.sentence}\r\n`, 'latin1');
}

test('with Requests in flight at once set to 1, two questions through a server send one request at a time, each read to its own answer', async ({ page }) => {
  await withOwnServer(async (server) => {
    // Replies paced as a model writes them, so that requests sent beyond the bound would be seen overlapping.
    server.tokenDelayMs = 1;
    await page.goto('/');
    await connectServer(page, server.url);
    const atOnce = page.getByRole('spinbutton', { name: 'Requests in flight at once' });
    await expect(atOnce).toHaveValue('4');
    // A number out of range is said beside the field as it is typed.
    await atOnce.fill('0');
    await expect(atOnce).toHaveAttribute('aria-invalid', 'true');
    await expect(page.getByRole('alert')).toHaveText('Requests in flight at once must be a whole number from 1 to 64.');
    await atOnce.fill('1');
    await expect(atOnce).not.toHaveAttribute('aria-invalid');
    await expect(page.getByRole('alert')).toHaveCount(0);
    await askTwo(page, twoFactExcerpt(), 'excerpt.txt');
    await page.getByRole('spinbutton', { name: 'Chunk size (tokens)' }).fill('1000');
    await page.getByRole('spinbutton', { name: 'Memory size (tokens)' }).fill('64');
    await page.getByRole('button', { name: 'Read' }).click();

    await openPlace(page, 'Library');
    const runs = page.getByRole('navigation', { name: 'Runs' });
    for (const q of [PLANTED.question, SECOND.question]) {
      await expect(runs.getByRole('progressbar', { name: `Progress: ${q}` })).toHaveAttribute('aria-valuetext', /, done$/, { timeout: 60_000 });
    }
    expect(server.maxInFlight).toBe(1);
    await runs.getByRole('button', { name: SECOND.question }).click();
    await expect(answerOf(page, SECOND.question)).toContainText(SECOND.answer);
    await openPlace(page, 'Library');
    await runs.getByRole('button', { name: PLANTED.question }).click();
    await expect(answerOf(page, PLANTED.question)).toContainText(PLANTED.code);
  });
});

test('two questions through an OpenAI-compatible server are read at once; one paused, the other reads on, and it resumes after a reload', async ({ page }) => {
  // A server of the test's own, which holds requests until the test lets them go.
  const server = await ownOpenAIServer();
  try {
    await page.goto('/');
    await connectServer(page, server.url);
    await askTwo(page, twoFactExcerpt(), 'excerpt.txt');
    await page.getByRole('spinbutton', { name: 'Chunk size (tokens)' }).fill('1000');
    await page.getByRole('spinbutton', { name: 'Memory size (tokens)' }).fill('64');
    // Every request waits until both runs have one in flight: runs read one after the other would never get there.
    void server.holdAfterNext(0);
    await page.getByRole('button', { name: 'Read' }).click();
    await server.whenHeld(2);
    expect(server.maxInFlight).toBe(2);

    // From here the second question's seventh step waits at the server, while the first reads on.
    let asked = 0;
    void server.hold((r) => r.prompt.includes(SECOND.question) && ++asked > 5);
    server.releaseHeld();
    await server.whenHeld(1);
    await openPlace(page, 'Library');
    const runs = page.getByRole('navigation', { name: 'Runs' });
    await runs.getByRole('button', { name: SECOND.question }).click();
    await expect(page.getByRole('region', { name: 'Run' }).getByRole('heading', { name: SECOND.question, level: 2 })).toBeVisible();
    await expect(page.getByRole('progressbar', { name: 'Reading progress' })).toHaveAttribute('aria-valuenow', '6');
    await page.getByRole('button', { name: 'Pause', exact: true }).click();
    await expect(page.getByRole('button', { name: 'Resume', exact: true })).toBeVisible();
    server.release();

    await openPlace(page, 'Library');
    await runs.getByRole('button', { name: PLANTED.question }).click();
    await expect(answerOf(page, PLANTED.question)).toContainText(PLANTED.code, { timeout: 60_000 });
    const { runs: records } = await stored(page);
    const a = records.find((r) => r.question === PLANTED.question)!;
    const b = records.find((r) => r.question === SECOND.question)!;
    expect(a.status).toBe('done');
    expect(b).toMatchObject({ status: 'paused', nextChunk: 6 });

    // After a reload the paused run stays paused until Resume, then reads on to its own answer.
    await page.reload();
    await openPlace(page, 'Library');
    await runs.getByRole('button', { name: SECOND.question }).click();
    await expect(page.getByRole('button', { name: 'Resume', exact: true })).toBeVisible();
    expect((await stored(page)).runs.find((r) => r.id === b.id)!.nextChunk).toBe(6);
    await page.getByRole('button', { name: 'Resume', exact: true }).click();
    await expect(answerOf(page, SECOND.question)).toContainText(SECOND.answer, { timeout: 60_000 });
    const total = Number(await page.getByRole('progressbar', { name: 'Reading progress' }).getAttribute('aria-valuemax'));
    const indexes = await storedRevisionIndexes(page);
    expect(indexes[a.id]).toEqual(range(total));
    expect(indexes[b.id]).toEqual(range(total));
  } finally {
    await server.stop();
  }
});
