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
  // The answer's source followed: the revision that wrote it down, its changes, and the sentence of the book it came from, marked.
  const sources = page.getByRole('region', { name: 'Answer' }).getByRole('region', { name: 'Sources' });
  await expect(sources.getByRole('figure')).toHaveCount(1);
  await expect(sources).toContainText(PLANTED.sentence);
  await sources.getByRole('link', { name: /^Show revision \d+ in the inspector$/ }).click();
  const memory = page.getByRole('region', { name: 'Memory', exact: true });
  await expect(memory).toContainText(PLANTED.code);
  await expect(page.getByRole('region', { name: 'Section' })).toContainText(`Cited sentence: ${PLANTED.sentence}`);
  await expect(page.getByRole('region', { name: 'Memory changes' }).getByRole('heading')).toContainText(/\+[1-9]\d* /);
  // The page from its navigation down to the panes.
  await page.evaluate(() => window.scrollTo(0, 0));
  const file = testInfo.outputPath('read-inspector.png');
  await page.screenshot({ path: file, fullPage: false });
  if (process.env.MEMAGENT_DOCS_SCREENSHOT === '1') copyFileSync(file, DOCS_PICTURE);
});
