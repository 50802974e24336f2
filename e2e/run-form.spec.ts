import { expect, type Page, test } from '@playwright/test';
import { bookWith, connectServer, PLANTED, plantedBook, storedRecords, withOwnServer } from './helpers';
import { openPlace } from './places';

const FERRY = {
  sentence: 'The ferry to Carrow Island leaves from pier 17.',
  question: 'From which pier does the ferry to Carrow Island leave?',
};

/** The Read form's fields, found as a person finds them. */
function form(page: Page) {
  return {
    // The file input names the book the form holds in its description.
    book: page.getByLabel('Document'),
    question: page.getByLabel('Question', { exact: true }),
    question2: page.getByLabel('Question 2', { exact: true }),
    engine: page.getByRole('combobox', { name: 'Engine' }),
    chunk: page.getByLabel('Chunk size (tokens)'),
    memory: page.getByLabel('Memory size (tokens)'),
  };
}

/** Puts `name` with `buffer` on the form and waits until the form names it. */
async function chooseBook(page: Page, name: string, buffer: Buffer): Promise<void> {
  await page.getByLabel('Document').setInputFiles({ name, mimeType: 'text/plain', buffer });
  await page.getByText(new RegExp(`${name.replace('.', '\\.')} — .*tokens`)).waitFor();
}

test('after a reload mid-read the form shows the run: its book, both questions, its engine and settings', async ({ page }) => {
  await withOwnServer(async (server) => {
    await page.goto('/');
    await connectServer(page, server.url);
    const f = form(page);
    // The server holds a step in flight: the reload comes mid-read, however fast this machine is.
    const held = server.holdAfterNext(6);
    await chooseBook(page, 'frankenstein.txt', plantedBook(0.3));
    await f.question.fill(PLANTED.question);
    await page.getByRole('button', { name: 'Add a question' }).click();
    await f.question2.fill(FERRY.question);
    await f.chunk.fill('1000');
    await f.memory.fill('512');
    await page.getByRole('button', { name: 'Read' }).click();
    await held;
    // The form is changed after Read: what this browser keeps for the next read is no longer the run's.
    await f.chunk.fill('3000');
    await f.memory.fill('256');
    await f.engine.selectOption({ label: 'Extractive (no model)' });
    const progress = page.getByRole('progressbar', { name: 'Reading progress' });
    const before = Number(await progress.getAttribute('aria-valuenow'));

    await page.reload();
    server.release();
    await expect(f.book).toHaveAccessibleDescription('frankenstein.txt');
    await expect(page.getByText(/frankenstein\.txt — .*tokens/)).toBeVisible();
    await expect(f.question).toHaveValue(PLANTED.question);
    await expect(f.question2).toHaveValue(FERRY.question);
    await expect(f.engine).toHaveValue('openai');
    await expect(page.getByLabel('Base URL', { exact: true })).toHaveValue(server.url);
    await expect(f.chunk).toHaveValue('1000');
    await expect(f.memory).toHaveValue('512');
    // And the run read on from where it was.
    await expect.poll(async () => Number(await progress.getAttribute('aria-valuenow')), { timeout: 60_000 }).toBeGreaterThan(before);
  });
});

test('a run opened from the Library puts its book, question and settings on the form; deleting it asks first and goes back', async ({ page }) => {
  await page.goto('/');
  const f = form(page);
  const done = page.getByText(/^Done · /);
  await chooseBook(page, 'vault.txt', plantedBook(0.5));
  await f.question.fill(PLANTED.question);
  await f.memory.fill('512');
  await page.getByRole('button', { name: 'Read' }).click();
  await expect(done).toBeVisible({ timeout: 90_000 });
  // The book read, the estimate knows its count: the read's own, without "about".
  const total = await page.getByRole('progressbar', { name: 'Reading progress' }).getAttribute('aria-valuemax');
  await expect(page.getByRole('note', { name: 'Estimate' })).toHaveText(new RegExp(`^${total} chunks: expected `));
  await chooseBook(page, 'ferry.txt', bookWith([[0.4, FERRY.sentence]]));
  await f.question.fill(FERRY.question);
  await f.memory.fill('256');
  await page.getByRole('button', { name: 'Read' }).click();
  await expect(page.getByRole('heading', { level: 2, name: FERRY.question })).toBeVisible();
  await expect(done).toBeVisible({ timeout: 90_000 });

  // A book chosen and not read yet stays on the form after a reload, in place of the run shown's, and the form says whose it is.
  await chooseBook(page, 'harbour.txt', bookWith([[0.5, 'The harbour was quiet that spring.']]));
  await page.reload();
  await expect(page.getByRole('heading', { level: 2, name: FERRY.question })).toBeVisible();
  await expect(f.book).toHaveAccessibleDescription('harbour.txt');
  await expect(page.getByText('(your choice)', { exact: true })).toBeVisible();

  // The first run, from the Library: the form holds its book, question and memory size, not the second run's.
  await openPlace(page, 'Library');
  const runs = page.getByRole('navigation', { name: 'Runs' });
  await runs.getByRole('button', { name: new RegExp(PLANTED.question) }).click();
  await expect(page.getByRole('heading', { level: 2, name: PLANTED.question })).toBeVisible();
  await expect(f.book).toHaveAccessibleDescription('vault.txt');
  await expect(page.getByText('(from the run shown)', { exact: true })).toBeVisible();
  await expect(f.question).toHaveValue(PLANTED.question);
  await expect(f.memory).toHaveValue('512');

  // Delete run asks in place, as the Library does for a book: focus on Keep run, Escape keeps it.
  const deleteButton = page.getByRole('button', { name: 'Delete run' });
  await deleteButton.click();
  const confirm = page.getByRole('group', { name: 'Confirm delete run' });
  await expect(confirm).toContainText(/Delete this run and its \d+ revisions\? vault\.txt stays in the Library\./);
  await expect(confirm.getByRole('button', { name: 'Keep run' })).toBeFocused();
  await page.keyboard.press('Escape');
  await expect(confirm).toHaveCount(0);
  await expect(deleteButton).toBeFocused();
  expect(await storedRecords(page, 'runs')).toHaveLength(2);

  await page.keyboard.press('Enter');
  await expect(confirm.getByRole('button', { name: 'Keep run' })).toBeFocused();
  await page.keyboard.press('Shift+Tab');
  await expect(confirm.getByRole('button', { name: 'Yes, delete run' })).toBeFocused();
  await page.keyboard.press('Enter');
  // Back where the run was opened from, the Library, which says what became of it.
  await expect(page.getByRole('heading', { level: 1, name: 'Library', exact: true })).toBeVisible();
  const told = page.getByRole('status').filter({ hasText: `Deleted the run “${PLANTED.question}”.` });
  await expect(told).toBeFocused();
  await expect(runs.getByRole('button', { name: new RegExp(PLANTED.question) })).toHaveCount(0);
  await expect(runs.getByRole('button', { name: new RegExp(FERRY.question) })).toHaveCount(1);

  // A run opened by its link is deleted where it was shown: the Read page, with its form as it was.
  const [left] = await storedRecords<{ id: string }>(page, 'runs');
  await page.goto(`/?run=${left!.id}`);
  await expect(page.getByRole('heading', { level: 2, name: FERRY.question })).toBeVisible();
  await expect(f.book).toHaveAccessibleDescription('ferry.txt');
  await deleteButton.click();
  await confirm.getByRole('button', { name: 'Yes, delete run' }).click();
  await expect(page.getByRole('status').filter({ hasText: `Deleted the run “${FERRY.question}”.` })).toBeFocused();
  await expect(page.getByRole('heading', { level: 1, name: 'Read a book' })).toBeVisible();
  await expect(page.getByRole('progressbar', { name: 'Reading progress' })).toHaveCount(0);
  await expect(f.question).toHaveValue(FERRY.question);
  expect(new URL(page.url()).searchParams.get('run')).toBeNull();
  expect(await storedRecords(page, 'runs')).toHaveLength(0);
});
