import { expect, type Locator, type Page, test } from '@playwright/test';
import { seriousViolations } from './axe';
import { PLANTED, plantedBook, readBook } from './helpers';
import { openPlace, PLACES, smallEvaluation } from './places';

const THEMES = ['light', 'dark'] as const;

async function checkEveryPage(page: Page, when: string): Promise<void> {
  for (const theme of THEMES) {
    await page.emulateMedia({ colorScheme: theme });
    for (const place of PLACES) {
      await openPlace(page, place.link);
      expect(await seriousViolations(page), `${place.link}, ${when}, ${theme} theme`).toEqual([]);
    }
  }
}

test('axe finds nothing serious on any page, idle and after a read with the inspector open, in both themes', async ({ page }) => {
  test.setTimeout(400_000);
  await page.goto('/');
  await checkEveryPage(page, 'idle');

  await openPlace(page, 'Read');
  await readBook(page, plantedBook(0.5), { chunkTokens: 2000 });
  // Everything a run view can unfold: its settings, and the form's sampling and prompts.
  await page.getByText('Run settings').click();
  await page.getByRole('region', { name: 'Settings' }).getByText('Sampling and prompts').click();
  await page.getByLabel('Search memories').fill('vault');
  await smallEvaluation(page);
  await checkEveryPage(page, 'after a read');
});

/** The focused element, and whether it shows a focus ring: an outline at least 2 px wide. */
function focused(page: Page) {
  return page.evaluate(() => {
    const el = document.activeElement as HTMLElement | null;
    if (!el || el === document.body) return null;
    const style = getComputedStyle(el);
    const name = el.getAttribute('aria-label') || (el as HTMLInputElement).labels?.[0]?.textContent || el.textContent || '';
    return { what: `${el.tagName.toLowerCase()} "${name.trim().slice(0, 40)}"`, ring: style.outlineStyle !== 'none' && parseFloat(style.outlineWidth) >= 2 };
  });
}

/** Presses Tab (or Shift+Tab) until `target`, or something inside it, has focus, checking that every control on the way shows where focus is. */
async function tabTo(page: Page, target: Locator, { back = false, limit = 80 } = {}): Promise<void> {
  for (let i = 0; i < limit; i++) {
    if (await target.evaluate((el) => el.contains(document.activeElement))) return;
    await page.keyboard.press(back ? 'Shift+Tab' : 'Tab');
    const now = await focused(page);
    if (now) expect(now.ring, `focus is visible on ${now.what}`).toBe(true);
  }
  throw new Error(`${limit} presses of Tab did not reach ${target}`);
}

test('keyboard only: choose a book, ask, read, move through revisions, export and open the run from the Library', async ({ page }) => {
  test.setTimeout(120_000);
  await page.goto('/');
  // A person presses Tab once the page is shown; from the top of the page the skip link comes first, then the navigation, each with its focus ring in both themes.
  await expect(page.getByRole('navigation', { name: 'Pages' }).getByRole('link', { name: 'Read', exact: true })).toBeVisible();
  await page.keyboard.press('Tab');
  for (const theme of THEMES) {
    await page.emulateMedia({ colorScheme: theme });
    expect(await focused(page)).toEqual({ what: 'a "Skip to main content"', ring: true });
  }
  await page.keyboard.press('Tab');
  for (const theme of THEMES) {
    await page.emulateMedia({ colorScheme: theme });
    expect(await focused(page)).toEqual({ what: 'a "Read"', ring: true });
  }
  // The skip link goes past the navigation to the page's heading.
  await page.keyboard.press('Shift+Tab');
  await page.keyboard.press('Enter');
  await expect(page.getByRole('heading', { level: 1, name: 'Read a book' })).toBeFocused();

  const chooseBook = page.getByRole('button', { name: 'Choose a book…' });
  await tabTo(page, chooseBook);
  // Enter opens the file dialog, which is the system's, not the page's: the file is chosen in it as a person would.
  // The key goes to the button as the page stands when it is pressed (Tab reached it just before).
  const chooser = page.waitForEvent('filechooser');
  await chooseBook.press('Enter');
  await (await chooser).setFiles({ name: 'frankenstein.txt', mimeType: 'text/plain', buffer: plantedBook(0.5) });
  await expect(page.getByText(/frankenstein\.txt — .*tokens/)).toBeVisible();
  await tabTo(page, page.getByLabel('Question'));
  await page.keyboard.type(PLANTED.question);
  await tabTo(page, page.getByRole('spinbutton', { name: 'Chunk size (tokens)' }));
  await page.keyboard.press('ControlOrMeta+A');
  await page.keyboard.type('2000');
  await tabTo(page, page.getByRole('button', { name: 'Read' }));
  await page.keyboard.press('Enter');
  // Focus goes to the run Read started.
  await expect(page.getByRole('heading', { level: 2, name: PLANTED.question })).toBeFocused();
  await expect(page.getByRole('region', { name: 'Answer' })).toContainText(PLANTED.code, { timeout: 90_000 });
  const total = Number(await page.getByRole('progressbar', { name: 'Reading progress' }).getAttribute('aria-valuemax'));
  const section = page.getByRole('region', { name: 'Section' });

  // Revisions: the slider steps back one; in the timeline Home, the arrows and End move the selection.
  await tabTo(page, page.getByRole('slider', { name: 'Revision' }));
  await page.keyboard.press('ArrowLeft');
  await expect(section).toContainText(`Section ${total - 1} of ${total}`);
  const entries = page.getByRole('list', { name: 'Memory revisions' });
  await tabTo(page, entries);
  await page.keyboard.press('Home');
  await expect(section).toContainText(`Section 1 of ${total}`);
  await page.keyboard.press('ArrowDown');
  await expect(section).toContainText(`Section 2 of ${total}`);
  await expect(entries.getByRole('listitem', { name: /^Revision 2:/ }).getByRole('button')).toBeFocused();
  await page.keyboard.press('End');
  await expect(section).toContainText(`Section ${total} of ${total}`);
  // The timeline is one Tab stop: Tab leaves it, Shift+Tab comes back to the selected entry.
  const last = entries.getByRole('listitem', { name: new RegExp(`^Revision ${total}:`) }).getByRole('button');
  await expect(last).toBeFocused();
  await page.keyboard.press('Tab');
  expect(await entries.evaluate((el) => el.contains(document.activeElement))).toBe(false);
  await page.keyboard.press('Shift+Tab');
  await expect(last).toBeFocused();

  // Export, back up the page.
  for (const name of ['Export Markdown', 'Export JSON']) {
    await tabTo(page, page.getByRole('button', { name }), { back: true });
    const download = page.waitForEvent('download');
    await page.keyboard.press('Enter');
    expect((await download).suggestedFilename()).toMatch(name === 'Export JSON' ? /\.json$/ : /\.md$/);
  }

  // The Library, and the run opened from it: focus moves to each place it opens.
  await tabTo(page, page.getByRole('link', { name: 'Library', exact: true }), { back: true });
  await page.keyboard.press('Enter');
  await expect(page.getByRole('heading', { level: 1, name: 'Library' })).toBeFocused();
  await tabTo(page, page.getByRole('navigation', { name: 'Runs' }).getByRole('button', { name: new RegExp(PLANTED.question.slice(0, 20)) }));
  await page.keyboard.press('Enter');
  await expect(page.getByRole('region', { name: 'Answer' })).toContainText(PLANTED.code);
  await page.keyboard.press('Tab');
  expect((await focused(page))?.what).toBe('summary "Run settings"');
});
