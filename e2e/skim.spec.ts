import { expect, test } from '@playwright/test';
import { bookWith } from './helpers';

// Two facts far apart: the first names the sailor; the second, which shares no word with the question, only his surname.
const FIRST = 'Captain Ferrand gave a brass astrolabe to a sailor named Tobias Quennell.';
const SECOND = 'Quennell hid it beneath the old mill at Saint-Orvan.';
const QUESTION = 'In which town did the brass astrolabe that Captain Ferrand gave away end up hidden?';

/** Frankenstein as its real bytes, FIRST a quarter of the way in and SECOND three quarters in, each its own paragraph. */
const twoHopBook = () =>
  bookWith([
    [0.25, FIRST],
    [0.75, SECOND],
  ]);

test('skim mode follows the name the memory found to the second fact, and the timeline says why each chunk was read', async ({ page }) => {
  await page.goto('/');
  await page.getByLabel('Document').setInputFiles({ name: 'frankenstein.txt', mimeType: 'text/plain', buffer: twoHopBook() });
  await expect(page.getByText(/frankenstein\.txt — .*tokens/)).toBeVisible();
  await page.getByLabel('Question').fill(QUESTION);
  await page.getByLabel('Chunk size (tokens)').fill('1000');
  await page.getByLabel('Skim mode').check();
  await expect(page.getByLabel('Follow what the memory finds')).toBeChecked();
  await expect(page.getByLabel('Look back at earlier chunks the memory points to')).not.toBeChecked();
  await page.getByRole('button', { name: 'Read' }).click();
  await expect(page.getByRole('region', { name: 'Answer' })).toContainText('Ferrand');

  const progress = page.getByRole('progressbar', { name: 'Reading progress' });
  const read = Number(await progress.getAttribute('aria-valuemax'));
  await expect(progress).toHaveAttribute('aria-valuenow', String(read));
  await page.getByText('Run settings').click();
  const plan = page.getByText(/^reads \d+ of \d+ chunks/);
  await expect(plan).toContainText(/following what the memory finds: [1-9]\d* followed/);
  const total = Number(/of (\d+) chunks/.exec((await plan.textContent()) ?? '')?.[1]);
  expect(read / total).toBeLessThanOrEqual(0.25);

  // Step through the timeline from the first revision: find the sections that hold each fact.
  const list = page.getByRole('list', { name: 'Memory revisions' });
  const section = page.getByRole('region', { name: 'Section' });
  await list.getByRole('listitem').first().getByRole('button').click();
  await page.keyboard.press('Home');
  const found: Record<string, number> = {};
  for (let k = 1; k <= read; k++) {
    await expect(section).toContainText(`Section ${k} of ${read}`);
    const shown = (await section.textContent()) ?? '';
    if (shown.includes(FIRST)) found.first = k;
    if (shown.includes(SECOND)) found.second = k;
    await page.keyboard.press('ArrowDown');
  }
  expect(found.first).toBeDefined();
  expect(found.second).toBeGreaterThan(found.first!);
  // The first fact matched the question; the second was read only because the memory named Quennell.
  const entry = (k: number) => list.getByRole('listitem', { name: new RegExp(`^Revision ${k}:`) });
  await entry(found.second!).getByRole('button').click();
  await expect(entry(found.second!)).toHaveAccessibleName(/, read because: followed: Quennell$/);
  await expect(entry(found.second!)).toContainText('followed: Quennell');
  await entry(found.first!).getByRole('button').click();
  await expect(entry(found.first!)).toContainText(/ranked|neighbour/);
  await expect(page.getByRole('region', { name: 'Memory', exact: true })).toContainText('Tobias Quennell');
});
