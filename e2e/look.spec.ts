import { statSync } from 'node:fs';
import { expect, type Page, test } from '@playwright/test';
import { plantedBook, readBook } from './helpers';
import { openPlace, PLACES, smallEvaluation } from './places';

/** What sticks out sideways: elements past the viewport's edges that no scrolling container holds. */
function cutOff(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const width = document.documentElement.clientWidth;
    const out: string[] = [];
    if (document.documentElement.scrollWidth > width) out.push(`the page scrolls sideways: ${document.documentElement.scrollWidth} px in ${width} px`);
    const scrolls = (el: Element) => ['auto', 'scroll', 'hidden'].includes(getComputedStyle(el).overflowX);
    for (const el of document.body.querySelectorAll('*')) {
      const box = el.getBoundingClientRect();
      if (box.width === 0 || box.height === 0 || !el.checkVisibility({ visibilityProperty: true })) continue;
      let holder = el.parentElement;
      while (holder && holder !== document.body && !scrolls(holder)) holder = holder.parentElement;
      if (holder && holder !== document.body) continue;
      if (box.left < -1 || box.right > width + 1)
        out.push(`${el.tagName.toLowerCase()}.${el.className} spans ${Math.round(box.left)}–${Math.round(box.right)} px`);
    }
    return out.slice(0, 10);
  });
}

/** Controls shown smaller than 24 × 24 px (checkboxes excepted: their label is part of the target). */
function smallTargets(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const out: string[] = [];
    for (const el of document.querySelectorAll<HTMLElement>('a[href], button, select, textarea, summary, input:not([type="checkbox"]):not([type="radio"])')) {
      if (!el.checkVisibility({ visibilityProperty: true })) continue; // not shown
      // A file input behind the button that opens it (out of the tab order and the accessibility tree) is pressed through that button, measured in its own right.
      if (el.getAttribute('aria-hidden') === 'true' && el.tabIndex < 0) continue;
      // A control drawn as its label (a file picker styled as a button) is pressed through the label: measure that.
      const labels = el instanceof HTMLInputElement && el.getBoundingClientRect().width <= 1 ? [...(el.labels ?? [])] : [];
      const boxes = labels.map((l) => l.getBoundingClientRect());
      const box = boxes.length ? boxes.reduce((a, b) => (b.height > a.height ? b : a)) : el.getBoundingClientRect();
      if (box.width < 24 || box.height < 24)
        out.push(
          `${el.tagName.toLowerCase()} "${(el.textContent || el.getAttribute('aria-label') || '').trim().slice(0, 30)}" ${Math.round(box.width)}×${Math.round(box.height)}`,
        );
    }
    return out;
  });
}

const WIDTHS = [360, 390, 768, 1280, 1920, 2560];
/** Widths photographed: a phone, a laptop and a desktop. */
const PHOTOGRAPHED = [390, 1280, 1920];
const THEMES = ['light', 'dark'] as const;

test('every page from 360 to 2,560 px: nothing scrolls sideways or is cut off, controls are at least 24 px, and screenshots are saved', async ({
  page,
}, testInfo) => {
  test.setTimeout(240_000);
  await page.goto('/');
  // Pages with something on them: a finished run with its inspector and settings open, a book in the Library, an evaluation.
  await readBook(page, plantedBook(0.5), { chunkTokens: 2000 });
  await page.getByText('Run settings').click();
  await smallEvaluation(page);
  for (const width of WIDTHS) {
    await page.setViewportSize({ width, height: 900 });
    for (const place of PLACES) {
      await openPlace(page, place.link);
      expect(await cutOff(page), `${place.link} at ${width} px`).toEqual([]);
      expect(await smallTargets(page), `${place.link} at ${width} px`).toEqual([]);
      if (!PHOTOGRAPHED.includes(width)) continue;
      for (const theme of THEMES) {
        await page.emulateMedia({ colorScheme: theme });
        const path = testInfo.outputPath(`${place.id}-${width}-${theme}.png`);
        await page.screenshot({ path, fullPage: true });
        expect(statSync(path).size).toBeGreaterThan(0);
      }
    }
  }
});
