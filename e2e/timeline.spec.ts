import { expect, type Page, test } from '@playwright/test';
import { PLANTED } from './helpers';
import { openPlace } from './places';

/** A Markdown book of `n` sections, each under a long heading that wraps in the timeline. */
function sectionedBook(n: number): Buffer {
  const sections = Array.from(
    { length: n },
    (_, i) =>
      `# Part ${i + 1}: in which the travellers cross the frozen sea again and count their dogs\n\n` +
      `The ice held through the night of day ${i + 1}, and the sledges moved north along the ridge while the wind kept to the west. ` +
      `Every watch counted the dogs, wrote the count in the book and compared it with the one before; the numbers agreed until the light failed. ` +
      `Nobody spoke of the ship that waited in the bay, or of the letters still unwritten.\n\n`,
  );
  sections.splice(Math.floor(n * 0.6), 0, `${PLANTED.sentence}\n\n`);
  return Buffer.from(sections.join(''), 'utf8');
}

/** The timeline's visible band, and each drawn entry's box, top to bottom, with whether its content fits inside it. */
function entryBoxes(page: Page) {
  return page.getByRole('list', { name: 'Memory revisions' }).evaluate((list) => {
    const scroller = list.parentElement!;
    const top = scroller.getBoundingClientRect().top + scroller.clientTop;
    const view = { top, bottom: top + scroller.clientHeight };
    const entries = [...list.querySelectorAll(':scope > li')]
      .map((li) => {
        const box = li.getBoundingClientRect();
        const button = li.querySelector('button')!;
        return { name: li.getAttribute('aria-label')!.split(':')[0]!, top: box.top, bottom: box.bottom, fits: button.scrollHeight <= box.height + 1 };
      })
      .sort((a, b) => a.top - b.top);
    return { view, entries };
  });
}

/**
 * Drawn entries sit one under the other, each holding its text, with no gap or overlap, and fill the list's visible band,
 * once the list has measured what it drew (entries are measured as they are drawn, and the page above may still be growing:
 * the answer's sources come after the answer).
 */
async function expectStacked(page: Page, where: string): Promise<void> {
  await expect(() => stacked(page, where)).toPass({ timeout: 10_000 });
}

async function stacked(page: Page, where: string): Promise<void> {
  const { view, entries } = await entryBoxes(page);
  expect(entries.length, where).toBeGreaterThan(5);
  for (const [i, box] of entries.entries()) {
    expect(box.fits, `${box.name} (${where}) holds its text`).toBe(true);
    if (i > 0) expect(Math.abs(box.top - entries[i - 1]!.bottom), `${box.name} starts where ${entries[i - 1]!.name} ends (${where})`).toBeLessThanOrEqual(1);
  }
  expect(entries[0]!.top, `the entries cover the top of the list (${where})`).toBeLessThanOrEqual(view.top + 1);
  expect(entries[entries.length - 1]!.bottom, `the entries cover the bottom of the list (${where})`).toBeGreaterThanOrEqual(view.bottom - 1);
}

test('timeline entries never overlap, however their text wraps, in a 2,000-revision run', async ({ page }) => {
  test.setTimeout(300_000);
  await page.setViewportSize({ width: 390, height: 844 });
  await page.goto('/');
  await page.getByLabel('Document').setInputFiles({ name: 'travellers.md', mimeType: 'text/markdown', buffer: sectionedBook(2000) });
  await page.getByText(/travellers\.md — .*tokens/).waitFor();
  await page.getByLabel('Question').fill(PLANTED.question);
  await page.getByLabel('Chunk size (tokens)').fill('100');
  await page.getByLabel('Memory size (tokens)').fill('64');
  await page.getByRole('button', { name: 'Read' }).click();
  await expect(page.getByRole('region', { name: 'Answer' })).toContainText(PLANTED.code, { timeout: 240_000 });
  const total = Number(await page.getByRole('progressbar', { name: 'Reading progress' }).getAttribute('aria-valuemax'));
  expect(total).toBeGreaterThanOrEqual(2000);

  const slider = page.getByRole('slider', { name: 'Revision' });
  for (const width of [390, 1280]) {
    await page.setViewportSize({ width, height: 900 });
    for (const at of [1, Math.round(total / 2), total]) {
      await slider.fill(String(at));
      await expect(page.getByRole('region', { name: 'Section' })).toContainText(`Section ${at} of ${total}`);
      await expect(page.getByRole('list', { name: 'Memory revisions' }).getByRole('listitem', { name: new RegExp(`^Revision ${at}:`) })).toBeVisible();
      await expectStacked(page, `at revision ${at}, ${width} px`);
    }
  }
  // Another place, the window resized meanwhile, and back: the list is drawn anew around the selected entry.
  await page.setViewportSize({ width: 390, height: 900 });
  await openPlace(page, 'Library');
  await page.setViewportSize({ width: 1280, height: 900 });
  await openPlace(page, 'Read');
  await expect(page.getByRole('list', { name: 'Memory revisions' }).getByRole('listitem', { name: new RegExp(`^Revision ${total}:`) })).toBeVisible();
  await expectStacked(page, 'after a visit to the Library and a wider window');
});
