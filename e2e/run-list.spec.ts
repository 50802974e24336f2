import { expect, type Page, test } from '@playwright/test';
import { openPlace } from './places';

const BOOK = `${'The harbour was quiet that spring, and the boats stayed in. '.repeat(120)}\n\nThe vault code for the Marlowe archive is 4829137.\n`;
const QUESTION = 'What is the vault code for the Marlowe archive?';

async function read(page: Page, chunkTokens?: number): Promise<void> {
  await page.getByRole('link', { name: 'Read', exact: true }).click();
  await page.getByLabel('Question').fill(QUESTION);
  if (chunkTokens) await page.getByLabel('Chunk size (tokens)').fill(String(chunkTokens));
  await page.getByRole('button', { name: 'Read', exact: true }).click();
  await expect(page.getByRole('region', { name: 'Answer' })).toContainText('4829137');
}

test('the Library tells runs of one question apart by date, engine and the settings that differ from the defaults', async ({ page }) => {
  await page.goto('/');
  await page.getByLabel('Document').setInputFiles({ name: 'marlowe.txt', mimeType: 'text/plain', buffer: Buffer.from(BOOK) });
  await expect(page.getByText('marlowe.txt — ')).toBeVisible();
  await read(page);
  await read(page, 200);

  await openPlace(page, 'Library');
  const runs = page.getByRole('navigation', { name: 'Runs' }).getByRole('button', { name: new RegExp(QUESTION.replace('?', '\\?')) });
  await expect(runs).toHaveCount(2);
  const names = await Promise.all((await runs.all()).map((b) => b.textContent()));
  expect(names[0]).not.toBe(names[1]);
  const year = String(new Date().getFullYear());
  for (const name of names) {
    expect(name).toContain('Extractive (no model)');
    expect(name).toContain(year);
  }
  // Newest first: the second read, with its smaller chunks, named; the first used the defaults and names none.
  expect(names[0]).toContain('200-token chunks');
  expect(names[1]).not.toContain('-token chunks');

  // The runs can be searched by question, book or date, every word matched with case and accents folded.
  const search = page.getByLabel('Search runs');
  await search.fill(`MARLÖWE marlowe.txt ${year}`);
  await expect(page.getByText('2 of 2 runs match.')).toBeVisible();
  await expect(runs).toHaveCount(2);
  await search.fill('marlowe zebra');
  await expect(page.getByText('No run matches “marlowe zebra”.')).toBeVisible();
  await expect(runs).toHaveCount(0);
  await search.fill('');
  await expect(runs).toHaveCount(2);

  // Under its book, each run names its date; the book open on the Read page says why it cannot be opened again.
  const book = page.getByRole('listitem', { name: 'marlowe.txt' });
  await expect(book.getByRole('list', { name: 'Runs of marlowe.txt' }).getByRole('listitem')).toHaveText([new RegExp(year), new RegExp(year)]);
  await expect(book.getByRole('button', { name: 'Open' })).toBeDisabled();
  await expect(book.getByRole('button', { name: 'Open' })).toHaveAccessibleDescription('This book is already open on the Read page.');

  // Runs of different chunk sizes compare at the same place in the book: the last of the 200-token chunks beside the
  // one chunk the default size cut, which holds the code.
  await runs.first().click();
  await page.getByRole('slider', { name: 'Revision' }).press('End');
  await page.getByLabel('Compare with').selectOption({ index: 1 });
  const comparison = page.getByRole('region', { name: 'Comparison' });
  await expect(comparison.getByRole('heading')).toContainText('memory after chunk 1');
  await expect(comparison).toContainText(/its chunk 1, the one that read where chunk \d+ of this run starts/);
  await expect(comparison.locator('pre')).toContainText('4829137');
});
