import { expect, type Page, test } from '@playwright/test';
import { PLANTED, plantedBook, readBook } from './helpers';
import { openPlace } from './places';

const OTHER = 'Who is Henry Clerval?';

/** Opens the run asked `question` from the Library's list of runs. */
async function openRun(page: Page, question: string): Promise<void> {
  await openPlace(page, 'Library');
  await page
    .getByRole('navigation', { name: 'Runs' })
    .getByRole('button', { name: new RegExp(`^${question.slice(0, 20)}`) })
    .click();
  await expect(page.getByRole('region', { name: 'Run' }).getByRole('heading', { level: 2, name: question })).toBeVisible();
}

test('a search belongs to the run it was typed on, and each match is marked in the memory', async ({ page }) => {
  await page.goto('/');
  await readBook(page, plantedBook(0.5));
  // A second run over the same book, with another question.
  await page.getByLabel('Question').fill(OTHER);
  await page.getByRole('button', { name: 'Read', exact: true }).click();
  const run = page.getByRole('region', { name: 'Run' });
  await expect(run.getByRole('heading', { level: 2, name: OTHER })).toBeVisible();
  await expect(run.getByText(/^Done · /)).toBeVisible({ timeout: 90_000 });

  const search = page.getByLabel('Search memories');
  const count = page.getByText(/revisions? contains? it; first written at revision \d+/);
  await search.fill('Clerval');
  await expect(count).toBeVisible();
  // Accents, width and case are folded as a reader expects: "ＣＬÉＲＶＡＬ" finds Clerval, and marks it where it is.
  await search.fill('');
  await expect(count).toHaveCount(0);
  await search.fill('ＣＬÉＲＶＡＬ');
  await expect(count).toBeVisible();
  await page.getByRole('button', { name: 'Go to first match' }).click();
  await expect(page.getByRole('region', { name: 'Memory', exact: true }).getByTitle('Matches your search').first()).toHaveText('Clerval');

  // The first run opens with an empty search and no count from the other.
  await openRun(page, PLANTED.question);
  await expect(search).toHaveValue('');
  await expect(count).toHaveCount(0);
  await expect(page.getByText('No memory contains this.')).toHaveCount(0);

  // Its own search finds the planted code, and the memory shown marks it where it is.
  await search.fill(PLANTED.code);
  await expect(count).toBeVisible();
  await page.getByRole('button', { name: 'Go to first match' }).click();
  const memory = page.getByRole('region', { name: 'Memory', exact: true });
  const marks = memory.getByTitle('Matches your search');
  await expect(marks.first()).toHaveText(PLANTED.code);
  // Every occurrence is marked, and nothing else.
  const text = (await memory.locator('pre').textContent()) ?? '';
  await expect(marks).toHaveCount(text.split(PLANTED.code).length - 1);
  // Case does not matter, as in the search itself.
  await search.fill('marlowe ARCHIVE');
  await expect(marks.first()).toHaveText(/^Marlowe archive$/i);
  await search.fill('');
  await expect(marks).toHaveCount(0);
  await search.fill(PLANTED.code);
  await expect(count).toBeVisible();

  // Back on the second run, the first one's search is not there either.
  await openRun(page, OTHER);
  await expect(search).toHaveValue('');
  await expect(count).toHaveCount(0);
  await expect(memory.getByTitle('Matches your search')).toHaveCount(0);
});
