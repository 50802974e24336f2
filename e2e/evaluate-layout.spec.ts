import { expect, type Page, test } from '@playwright/test';
import { openPlace, tickOnly } from './places';

const NOISE = 'Needle in noise: a number';
const ESSAY = 'Needle in an essay: a number';

/** Two tasks the extractive engine answers alike, so that their points meet: one sample each at 8K and 16K. */
async function sweep(page: Page): Promise<void> {
  await page.goto('/');
  await openPlace(page, 'Evaluate');
  await tickOnly(page, 'Tasks', [NOISE, ESSAY]);
  await tickOnly(page, 'Lengths (tokens)', ['8K', '16K']);
  await page.getByLabel('Samples per cell').fill('1');
  await page.getByRole('button', { name: 'Start evaluation' }).click();
  await expect(page.getByText(/^Done · 4 of 4 samples/)).toBeVisible({ timeout: 90_000 });
}

/** The selected option's words against the room inside a select (its arrow aside). */
const fitsSelect = (select: HTMLSelectElement) => {
  const style = getComputedStyle(select);
  const canvas = document.createElement('canvas').getContext('2d')!;
  canvas.font = `${style.fontWeight} ${style.fontSize} ${style.fontFamily}`;
  return canvas.measureText(select.selectedOptions[0]!.text).width <= select.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight) - 20;
};

test('tasks have readable names, each explained, in the form, the table and the chart', async ({ page }) => {
  await page.goto('/');
  await openPlace(page, 'Evaluate');
  const vt = page.getByRole('group', { name: 'Tasks' }).getByRole('checkbox', { name: 'Variable tracking', exact: true });
  await expect(vt).toHaveAccessibleDescription(/assignments/);
  await expect(page.getByRole('checkbox', { name: 'Common words', exact: true })).toHaveAccessibleDescription(/repeats most/);
  await expect(page.getByRole('checkbox', { name: 'Frequent words', exact: true })).toHaveAccessibleDescription(/most frequent/);
});

for (const width of [360, 1280]) {
  test(`at ${width} px the results table fits its box, the reading mode shows whole and two series that meet stay apart`, async ({ page }) => {
    await page.setViewportSize({ width, height: 900 });
    await page.goto('/');
    await openPlace(page, 'Evaluate');
    expect(await page.getByRole('combobox', { name: 'Reading mode' }).evaluate(fitsSelect)).toBe(true);
    await sweep(page);

    const table = page.getByRole('table', { name: 'Results' });
    await expect(table.getByRole('rowheader', { name: new RegExp(NOISE) }).first()).toBeVisible();
    const fit = await table.evaluate((t) => {
      const box = t.parentElement!;
      const right = box.getBoundingClientRect().right;
      return {
        scroll: box.scrollWidth,
        client: box.clientWidth,
        outside: [...t.querySelectorAll('th, td')].filter((c) => c.getBoundingClientRect().right > right + 0.5).map((c) => c.textContent),
      };
    });
    expect(fit.outside).toEqual([]);
    expect(fit.scroll).toBeLessThanOrEqual(fit.client);
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(width);

    // Both tasks score the same at each length: their marks are drawn apart, not one over the other.
    const marks = await page
      .getByRole('img', { name: 'Accuracy against document length (log scale)' })
      .locator('circle')
      .evaluateAll((cs) => cs.map((c) => ({ x: Number(c.getAttribute('cx')), y: Number(c.getAttribute('cy')) })));
    expect(marks).toHaveLength(4);
    for (const a of marks) {
      const twins = marks.filter((b) => b !== a && b.x === a.x);
      for (const b of twins) expect(Math.abs(a.y - b.y)).toBeGreaterThanOrEqual(3);
    }
  });
}
