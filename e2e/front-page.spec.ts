import { copyFileSync } from 'node:fs';
import { expect, test } from '@playwright/test';
import { PLANTED, plantedBook, readBook } from './helpers';

/** Where the README's picture lives; `npm run docs:screenshot` rewrites it from this test's run. */
const DOCS_PICTURE = new URL('../docs/read-inspector.png', import.meta.url);

test('a finished read of Frankenstein with its inspector open is photographed for the front page', async ({ page }, testInfo) => {
  test.setTimeout(120_000);
  await page.setViewportSize({ width: 1280, height: 900 });
  await page.goto('/');
  await readBook(page, plantedBook(0.5), { chunkTokens: 2000 });
  // A revision in the middle of the book: memory, its changes and its section side by side.
  const slider = page.getByLabel('Revision', { exact: true });
  await slider.focus();
  await page.keyboard.press('End');
  await expect(page.getByRole('region', { name: 'Answer' })).toContainText(PLANTED.code);
  await expect(page.getByRole('region', { name: 'Memory', exact: true })).toContainText(PLANTED.code);
  const file = testInfo.outputPath('read-inspector.png');
  await page.screenshot({ path: file, fullPage: false });
  if (process.env.MEMAGENT_DOCS_SCREENSHOT === '1') copyFileSync(file, DOCS_PICTURE);
});
