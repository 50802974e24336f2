import { expect, type Page, test } from '@playwright/test';
import { PLANTED } from './helpers';

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

/** Each shown timeline entry's box, top to bottom, and whether its content fits inside it. */
function entryBoxes(page: Page) {
  return page
    .getByRole('list', { name: 'Memory revisions' })
    .getByRole('listitem')
    .evaluateAll((items) =>
      items
        .map((li) => {
          const box = li.getBoundingClientRect();
          const button = li.querySelector('button')!;
          return { name: li.getAttribute('aria-label')!.split(':')[0]!, top: box.top, bottom: box.bottom, fits: button.scrollHeight <= box.height + 1 };
        })
        .sort((a, b) => a.top - b.top),
    );
}

async function expectNoOverlap(page: Page, where: string): Promise<void> {
  const boxes = await entryBoxes(page);
  expect(boxes.length, where).toBeGreaterThan(5);
  for (const [i, box] of boxes.entries()) {
    expect(box.fits, `${box.name} (${where}) holds its text`).toBe(true);
    if (i > 0) expect(box.top, `${box.name} starts below ${boxes[i - 1]!.name} ends (${where})`).toBeGreaterThanOrEqual(boxes[i - 1]!.bottom - 0.5);
  }
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
      await expectNoOverlap(page, `at revision ${at}, ${width} px`);
    }
  }
});
