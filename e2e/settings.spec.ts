import { expect, test } from '@playwright/test';
import { PLANTED, plantedBook, storedCounts } from './helpers';

test('edited settings and templates are checked, reset, and recorded on the run', async ({ page }) => {
  await page.goto('/');
  await page.getByLabel('Document').setInputFiles({ name: 'frankenstein.txt', mimeType: 'text/plain', buffer: plantedBook(0.5) });
  await expect(page.getByText(/frankenstein\.txt — .*tokens/)).toBeVisible();
  await page.getByLabel('Question').fill(PLANTED.question);

  const settings = page.getByRole('region', { name: 'Settings' });
  await settings.getByText('Sampling and prompts').click();
  await settings.getByLabel('Temperature').fill('0.3');
  await settings.getByLabel('Seed').fill('42');
  const update = settings.getByLabel('Memory update template');
  await update.fill((await update.inputValue()).replace('{section}', ''));
  await page.getByRole('button', { name: 'Read' }).click();
  await expect(page.getByRole('alert')).toHaveText(/memory update template must contain \{section\}/);
  expect((await storedCounts(page)).runs ?? 0).toBe(0);

  await settings.getByRole('button', { name: 'Reset to default' }).click();
  await expect(update).toHaveValue(/<section>\n\{section\}\n<\/section>/);
  await page.getByRole('button', { name: 'Read' }).click();
  await expect(page.getByRole('region', { name: 'Answer' })).toContainText(PLANTED.code);

  await page.getByText('Run settings').click();
  await expect(page.getByText('temperature 0.3, top p 0.95, seed 42')).toBeVisible();
  // Settings are kept for the next visit.
  await page.reload();
  await page.getByRole('region', { name: 'Settings' }).getByText('Sampling and prompts').click();
  await expect(page.getByLabel('Temperature')).toHaveValue('0.3');
});

test('skim mode reads a small share of the book, and the estimate says what it saves', async ({ page }) => {
  await page.goto('/');
  await page.getByLabel('Document').setInputFiles({ name: 'frankenstein.txt', mimeType: 'text/plain', buffer: plantedBook(0.7) });
  await expect(page.getByText(/frankenstein\.txt — .*tokens/)).toBeVisible();
  await page.getByLabel('Question').fill(PLANTED.question);
  await page.getByLabel('Chunk size (tokens)').fill('1000');
  const estimate = page.getByRole('note', { name: 'Estimate' });
  // Nothing measured yet, and none needed: the extractive engine runs no model.
  await expect(estimate).toHaveText(/^About \d+ chunks: this engine runs no model, so the read takes moments\.$/);

  await page.getByRole('button', { name: 'Read' }).click();
  await expect(page.getByRole('region', { name: 'Answer' })).toContainText(PLANTED.code);
  const full = Number(await page.getByRole('progressbar', { name: 'Reading progress' }).getAttribute('aria-valuemax'));

  // Measured now: the estimate is a time, and skim mode says what it saves.
  await page.getByLabel('Document').setInputFiles({ name: 'frankenstein.txt', mimeType: 'text/plain', buffer: plantedBook(0.7) });
  await expect(estimate).toContainText(/expected .+ measured on this engine/);
  // Beyond its steps, a read starts the engine and cuts the book, stores each revision and answers: the finished read measured that too.
  await expect(estimate).toContainText(/; with .+ to start, store the revisions and answer, as past reads took\)\.$/);
  await page.getByLabel('Skim mode').check();
  await expect(page.getByLabel('Share of chunks to read (%)')).toHaveValue('5');
  // The book read before at this size, its count is known: no "about".
  await expect(estimate).toContainText(new RegExp(`Skim reads at most \\d+ of ${full} chunks: expected .+ saving about`));

  await page.getByRole('button', { name: 'Read' }).click();
  await expect(page.getByText(/skimmed from \d+/)).toBeVisible();
  await expect(page.getByRole('region', { name: 'Answer' })).toContainText(PLANTED.code);
  const skimmed = Number(await page.getByRole('progressbar', { name: 'Reading progress' }).getAttribute('aria-valuemax'));
  expect(skimmed).toBeLessThanOrEqual(Math.ceil(full * 0.2));
  await page.getByText('Run settings').click();
  await expect(page.getByText(new RegExp(`reads ${skimmed} of ${full} chunks`))).toBeVisible();
});
