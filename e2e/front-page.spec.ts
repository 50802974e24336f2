import { copyFileSync } from 'node:fs';
import { expect, test } from '@playwright/test';
import { PLANTED, plantedBook, readBook } from './helpers';

/** Where the README's picture lives; `npm run docs:screenshot` rewrites it from this test's run. */
const DOCS_PICTURE = new URL('../docs/read-inspector.png', import.meta.url);

test('a finished read of Frankenstein with its inspector open is photographed for the front page', async ({ page }, testInfo) => {
  test.setTimeout(120_000);
  await page.setViewportSize({ width: 1440, height: 1560 });
  await page.goto('/');
  await readBook(page, plantedBook(0.5), { chunkTokens: 2000 });
  await expect(page.getByRole('region', { name: 'Answer' })).toContainText(PLANTED.code);
  // The revision at which the memory first wrote the answer down: its changes, and the sentence of the book it came from.
  await page.getByLabel('Search memories').fill(PLANTED.code);
  await page.getByRole('button', { name: 'Go to first match' }).click();
  const memory = page.getByRole('region', { name: 'Memory', exact: true });
  await expect(memory).toContainText(PLANTED.code);
  await expect(page.getByRole('region', { name: 'Section' })).toContainText(PLANTED.sentence);
  await expect(page.getByRole('region', { name: 'Memory changes' }).getByRole('heading')).toContainText(/\+[1-9]\d* /);
  // The page from its navigation down to the panes.
  await page.evaluate(() => window.scrollTo(0, 0));
  const file = testInfo.outputPath('read-inspector.png');
  await page.screenshot({ path: file, fullPage: false });
  if (process.env.MEMAGENT_DOCS_SCREENSHOT === '1') copyFileSync(file, DOCS_PICTURE);
});
