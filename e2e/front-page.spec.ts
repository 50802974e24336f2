import { copyFileSync, readFileSync } from 'node:fs';
import { expect, test } from '@playwright/test';

/** The book the repository ships, read as the README says: nothing planted, every setting left at its default. */
const BOOK = readFileSync(new URL('../data/haystack/frankenstein.txt', import.meta.url));
/** The README's caption names this question: a read anyone can repeat. */
const QUESTION = 'Who is Henry Clerval?';

/** Where the README's picture lives; `npm run docs:screenshot` rewrites it from this test's run. */
const DOCS_PICTURE = new URL('../docs/read-inspector.png', import.meta.url);

test('a read of the shipped Frankenstein at the default settings, with its inspector open, is photographed for the front page', async ({ page }, testInfo) => {
  test.setTimeout(180_000);
  await page.setViewportSize({ width: 1440, height: 1560 });
  await page.goto('/');
  await page.getByLabel('Document').setInputFiles({ name: 'frankenstein.txt', mimeType: 'text/plain', buffer: BOOK });
  await page.getByText(/frankenstein\.txt — .*tokens/).waitFor();
  await page.getByLabel('Question').fill(QUESTION);
  await page.getByRole('button', { name: 'Read' }).click();
  const answer = page.getByRole('region', { name: 'Answer' });
  await expect(answer.getByRole('region', { name: 'Sources' }).getByRole('figure').first()).toBeVisible({ timeout: 150_000 });
  await expect(answer).toContainText('Clerval');
  // The answer's first source followed: the revision that wrote it down, its changes, and the sentence of the book it came from, marked.
  const source = answer.getByRole('region', { name: 'Sources' }).getByRole('figure').first();
  const sentence = (await source.getByRole('blockquote').innerText()).replace(/\s+/g, ' ');
  await source.getByRole('link', { name: /^Show revision \d+ in the inspector$/ }).click();
  await expect(page.getByRole('region', { name: 'Memory', exact: true })).toContainText('Clerval');
  await expect(page.getByRole('region', { name: 'Section' })).toContainText(`Cited sentence: ${sentence}`);
  // The page from its navigation down to the section pane, whatever the answer above it takes: the memory, its changes and the
  // marked sentence. The window is made that tall; the panes are sized by the window's height, so it is measured again.
  const section = page.getByRole('region', { name: 'Section' });
  for (let i = 0; i < 4; i++) {
    await page.evaluate(() => window.scrollTo(0, 0));
    const box = (await section.boundingBox())!;
    await page.setViewportSize({ width: 1440, height: Math.ceil(box.y + box.height + 16) });
  }
  await page.evaluate(() => window.scrollTo(0, 0));
  const file = testInfo.outputPath('read-inspector.png');
  await page.screenshot({ path: file, fullPage: false });
  if (process.env.MEMAGENT_DOCS_SCREENSHOT === '1') copyFileSync(file, DOCS_PICTURE);
});
