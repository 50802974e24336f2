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
