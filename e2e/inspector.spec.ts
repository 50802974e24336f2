import { readFileSync } from 'node:fs';
import { expect, type Page, test } from '@playwright/test';
import { PLANTED, plantedBook, readBook, storedCounts } from './helpers';
import { openPlace } from './places';

async function firstRevisionWith(page: Page, text: string): Promise<number> {
  await page.getByLabel('Search memories').fill(text);
  const hint = page.getByText(/first written at revision \d+/);
  await expect(hint).toBeVisible();
  return Number(/revision (\d+)/.exec((await hint.textContent()) ?? '')![1]);
}

test('the inspector shows where a fact entered memory, and keys, slider and links move through revisions', async ({ page }) => {
  await page.goto('/');
  await readBook(page, plantedBook(0.6));
  const max = Number(await page.getByRole('progressbar', { name: 'Reading progress' }).getAttribute('aria-valuemax'));
  const section = page.getByRole('region', { name: 'Section' });
  const changes = page.getByRole('region', { name: 'Memory changes' });

  const k = await firstRevisionWith(page, PLANTED.code);
  await page.getByRole('button', { name: 'Go to first match' }).click();
  await expect(section).toContainText(`Section ${k} of ${max}`);
  // The word diff marks the planted fact as added at this chunk.
  await expect(changes.getByRole('insertion').filter({ hasText: PLANTED.code })).toHaveCount(1);
  await expect(changes.getByRole('deletion').filter({ hasText: PLANTED.code })).toHaveCount(0);
  // The section's planted sentence is highlighted as drawn on.
  await expect(section.locator('mark').filter({ hasText: PLANTED.code })).toHaveCount(1);
  // Search marks the matching revisions in the timeline.
  await expect(page.getByRole('listitem', { name: new RegExp(`^Revision ${k}:`) })).toContainText('match');

  // Keyboard: arrows and j/k step, Home and End jump.
  const list = page.getByRole('list', { name: 'Memory revisions' });
  await list
    .getByRole('listitem', { name: new RegExp(`^Revision ${k}:`) })
    .getByRole('button')
    .click();
  await page.keyboard.press('ArrowDown');
  await expect(section).toContainText(`Section ${k + 1} of ${max}`);
  await page.keyboard.press('k');
  await page.keyboard.press('k');
  await expect(section).toContainText(`Section ${k - 1} of ${max}`);
  await page.keyboard.press('j');
  await expect(section).toContainText(`Section ${k} of ${max}`);
  await page.keyboard.press('Home');
  await expect(section).toContainText(`Section 1 of ${max}`);
  await expect(list.getByRole('listitem', { name: /^Revision 1:/ }).getByRole('button')).toBeFocused();
  await page.keyboard.press('End');
  await expect(section).toContainText(`Section ${max} of ${max}`);

  // The slider selects a revision, and the URL carries it through a reload.
  await page.getByRole('slider', { name: 'Revision' }).fill(String(k));
  await expect(section).toContainText(`Section ${k} of ${max}`);
  await expect(page).toHaveURL(new RegExp(`[?&]rev=${k}\\b`));
  const link = page.url();
  await page.reload();
  await expect(section).toContainText(`Section ${k} of ${max}`);
  await expect(page.getByRole('region', { name: 'Memory', exact: true })).toContainText(PLANTED.code);

  // The same link opens the same revision in another tab.
  const other = await page.context().newPage();
  await other.goto(link);
  await expect(other.getByRole('region', { name: 'Section' })).toContainText(`Section ${k} of ${max}`);
});

test('exports hold every revision, and a JSON export imports into another browser', async ({ page, browser }, info) => {
  await page.goto('/');
  await readBook(page, plantedBook(0.4));
  const max = Number(await page.getByRole('progressbar', { name: 'Reading progress' }).getAttribute('aria-valuemax'));
  const k = await firstRevisionWith(page, PLANTED.code);

  const [json] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Export JSON' }).click()]);
  const jsonPath = info.outputPath('run.json');
  await json.saveAs(jsonPath);
  const data = JSON.parse(readFileSync(jsonPath, 'utf8'));
  expect(data.run.question).toBe(PLANTED.question);
  expect(data.revisions).toHaveLength(max);
  expect(data.revisions.map((r: { index: number }) => r.index)).toEqual(Array.from({ length: max }, (_, i) => i));
  expect(data.revisions[k - 1].memory).toContain(PLANTED.code);
  expect(data.revisions[k - 2].memory).not.toContain(PLANTED.code);

  const [md] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Export Markdown' }).click()]);
  const mdPath = info.outputPath('run.md');
  await md.saveAs(mdPath);
  const markdown = readFileSync(mdPath, 'utf8');
  expect(markdown.match(/^## Revision \d+/gm)).toHaveLength(max);
  expect(markdown).toContain(`**Answer:** `);
  expect(markdown).toContain(PLANTED.code);

  // Imported where it is already: the Library says so beside Import run, and links to it.
  await openPlace(page, 'Library');
  await page.getByLabel('Import run').setInputFiles(jsonPath);
  await expect(page.getByText('This run is already in this browser:')).toBeVisible();
  await page.getByRole('button', { name: `Open “${PLANTED.question}”` }).click();
  await expect(page.getByRole('region', { name: 'Run' }).getByRole('heading', { level: 2, name: PLANTED.question })).toBeVisible();

  // Another browser profile: fresh storage, no book.
  const context = await browser.newContext();
  const fresh = await context.newPage();
  await fresh.goto('/');
  await openPlace(fresh, 'Library');
  await fresh
    .getByLabel('Import run')
    .setInputFiles({ name: 'broken.json', mimeType: 'application/json', buffer: Buffer.from('{"format":"memagent-run","version":1,"run":{}}') });
  await expect(fresh.getByRole('alert')).toContainText('not a valid memagent-web run export');
  expect((await storedCounts(fresh)).runs ?? 0).toBe(0);

  await fresh.getByLabel('Import run').setInputFiles(jsonPath);
  await expect(fresh.getByRole('region', { name: 'Answer' })).toContainText(PLANTED.code);
  await expect(fresh.getByRole('progressbar', { name: 'Reading progress' })).toHaveAttribute('aria-valuenow', String(max));
  expect(await firstRevisionWith(fresh, PLANTED.code)).toBe(k);
  await expect(fresh.getByRole('region', { name: 'Section' })).toContainText('does not have the book');
  // Its sources came with it, its book did not: following one says so where the passage would be, and takes the focus there.
  await fresh.getByRole('region', { name: 'Sources' }).getByRole('figure').filter({ hasText: PLANTED.sentence }).getByRole('link').click();
  const missing = fresh.getByText('The cited passage is in this run’s book, which is not in this browser: import the book (add its file) to see the passage.');
  await expect(missing).toBeFocused();
  await context.close();
});

test('two runs over the same book compare side by side at the same chunk', async ({ page }) => {
  await page.goto('/');
  await readBook(page, plantedBook(0.5));
  // The same question with a smaller memory: a second setting over the same chunks.
  await page.getByLabel('Memory size (tokens)').fill('128');
  await page.getByRole('button', { name: 'Read' }).click();
  await expect(page.getByText(/memory 128 tokens/)).toBeVisible();
  await expect(page.getByRole('region', { name: 'Answer' })).toContainText(PLANTED.code);

  // The choice says what it is for, and the run offered names its date, book and sizes.
  const choices = page.getByRole('combobox', { name: 'Compare with' }).getByRole('option');
  await expect(choices).toHaveText(['Choose the other run over this book', /20\d\d.* · frankenstein\.txt · chunk \d+ \/ memory 1024$/]);
  await page.getByLabel('Compare with').selectOption({ index: 1 });
  const comparison = page.getByRole('region', { name: 'Comparison' });
  await expect(comparison).toContainText('memory 1024');
  const k = await firstRevisionWith(page, PLANTED.code);
  await page.getByRole('button', { name: 'Go to first match' }).click();
  await expect(comparison).toContainText(`memory after chunk ${k}`);
  await expect(comparison).toContainText(PLANTED.code);
  await page.getByRole('slider', { name: 'Revision' }).fill('1');
  await expect(comparison).toContainText('memory after chunk 1');
  await expect(comparison).not.toContainText(PLANTED.code);

  // The other run, opened from the Library, shows its own section of the book: the same part of it as the run shown before.
  const section = page.getByRole('region', { name: 'Section', exact: true });
  await page.getByRole('slider', { name: 'Revision' }).press('End');
  await expect(section.getByRole('heading')).toHaveText(/^Section (\d+) of \1/);
  await openPlace(page, 'Library');
  const entries = page.getByRole('navigation', { name: 'Runs' }).getByRole('button', { name: new RegExp(PLANTED.question.slice(0, 20)) });
  await expect(entries).toHaveCount(2);
  const other = (await entries.nth(0).getAttribute('aria-current')) === 'page' ? entries.nth(1) : entries.nth(0);
  await other.click();
  await expect(page.getByRole('heading', { level: 1, name: 'Read a book' })).toBeVisible();
  await expect(page.getByText(/chunks of up to \d+ tokens · memory 1024 tokens/)).toBeVisible();
  await expect(section).toHaveAttribute('aria-busy', 'false');
  await expect(section.getByRole('heading')).toHaveText(/^Section (\d+) of \1/);
});
