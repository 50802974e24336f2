import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { expect, type Locator, type Page, test } from '@playwright/test';
import { plantedBook, readBook, storedRecords } from './helpers';
import { openPlace } from './places';

type Box = { x: number; y: number; width: number; height: number };

async function boxOf(locator: Locator): Promise<Box> {
  const box = await locator.boundingBox();
  expect(box, 'laid out').not.toBeNull();
  return box!;
}

/** Whether `inner` lies wholly within `outer`, top to bottom. */
async function within(inner: Locator, outer: Locator): Promise<boolean> {
  const [i, o] = [await boxOf(inner), await boxOf(outer)];
  return i.y >= o.y - 0.5 && i.y + i.height <= o.y + o.height + 0.5;
}

/**
 * A run read here, exported and imported again as a second run over the same book whose memories are long:
 * each starts with the same standing notes and then adds one line per revision, so that each revision's
 * change comes far down its memory. The imported run's id.
 */
async function longMemoryRun(page: Page): Promise<string> {
  await page.goto('/');
  await readBook(page, plantedBook(0.5));
  const [exported] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Export JSON' }).click()]);
  const data = JSON.parse(readFileSync(await exported.path(), 'utf8')) as { run: { id: string }; revisions: { memory: string }[] };
  const notes = Array.from({ length: 60 }, (_, i) => `Standing note ${i + 1}: kept from the start and never changed.`);
  data.run.id = randomUUID();
  data.revisions = data.revisions.map((r, i) => ({
    ...r,
    memory: [...notes, ...Array.from({ length: i + 1 }, (_, j) => `Written at revision ${j + 1}.`)].join('\n'),
  }));
  await openPlace(page, 'Library');
  await page.getByLabel('Import run').setInputFiles({ name: 'long.json', mimeType: 'application/json', buffer: Buffer.from(JSON.stringify(data)) });
  await expect(page.getByRole('heading', { level: 1, name: 'Read a book' })).toBeVisible();
  return data.run.id;
}

test('a link to revision 15 shows it in the timeline and Memory changes at its first change, with Compare with at the top', async ({ page }) => {
  const runId = await longMemoryRun(page);
  await page.goto(`/?run=${runId}&rev=15`);
  const section = page.getByRole('region', { name: 'Section', exact: true });
  await expect(section.getByRole('heading')).toHaveText(/^Section 15 of \d+/);

  // The timeline (a virtual list in a box of its own) has scrolled to the revision the link names.
  const list = page.getByRole('list', { name: 'Memory revisions' });
  const entry = list.getByRole('listitem', { name: /^Revision 15:/ });
  await expect(entry.getByRole('button')).toHaveAttribute('aria-current', 'true');
  const timeline = list.locator('xpath=..');
  await expect.poll(() => within(entry, timeline)).toBe(true);

  // Memory changes opens at its change, under 74 lines that did not change, not at the top.
  const changes = page.getByRole('region', { name: 'Memory changes' });
  const added = changes.getByRole('insertion').first();
  await expect(added).toContainText('15');
  await expect.poll(() => within(added, changes)).toBe(true);

  // Compare with sits with the inspector's controls, above the revisions, not under them.
  const compare = page.getByRole('combobox', { name: 'Compare with' });
  const search = await boxOf(page.getByLabel('Search memories'));
  const slider = await boxOf(page.getByRole('slider', { name: 'Revision' }));
  const c = await boxOf(compare);
  expect(c.y).toBeGreaterThanOrEqual(search.y);
  expect(c.y + c.height).toBeLessThanOrEqual(slider.y);
  expect(c.y).toBeLessThan((await boxOf(timeline)).y);
});

test('at 390 px a link to a run shows the run, not the empty form above it', async ({ page }) => {
  await page.goto('/');
  await readBook(page, plantedBook(0.5));
  const [run] = await storedRecords<{ id: string }>(page, 'runs');
  const runId = run!.id;
  await page.setViewportSize({ width: 390, height: 844 });
  await page.goto(`/?run=${runId}`);
  const heading = page.getByRole('region', { name: 'Run' }).getByRole('heading', { level: 2 });
  await expect(heading).toBeVisible();
  // The run's heading is on the first screen (to a pixel, as layout rounds), not 1,280 px down under the form.
  await expect
    .poll(async () => {
      const box = await boxOf(heading);
      return box.y > -1 && box.y + box.height <= 844;
    })
    .toBe(true);
});
