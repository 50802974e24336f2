import { expect, test } from '@playwright/test';
import { PLANTED, plantedBook, readBook } from './helpers';

test("Back from a source's revision in the inspector returns to the answer it was followed from", async ({ page }) => {
  await page.goto('/');
  await readBook(page, plantedBook(0.5), { chunkTokens: 2000 });
  const answer = page.getByRole('region', { name: 'Answer' });
  const link = answer.getByRole('region', { name: 'Sources' }).getByRole('link', { name: /^Show revision \d+ in the inspector$/ });
  await link.click();
  await expect(page).toHaveURL(/[?&]cite=\d+-\d+/);
  await expect(page.getByRole('region', { name: 'Section' })).toContainText(`Cited sentence: ${PLANTED.sentence}`);

  await page.goBack();
  await expect(page).not.toHaveURL(/[?&](cite|rev)=/);
  await expect(page).toHaveURL(/[?&]run=/);
  await expect(answer).toContainText(PLANTED.code);
  await expect(link).toBeVisible();
  await expect(page.getByRole('region', { name: 'Section' })).not.toContainText('Cited sentence:');

  // Forward shows the cited sentence again.
  await page.goForward();
  await expect(page.getByRole('region', { name: 'Section' })).toContainText(`Cited sentence: ${PLANTED.sentence}`);
});
