import { expect, type Page, test } from '@playwright/test';
import { plantedBook, readBook } from './helpers';

/** A font-family list as written, without quotes or spaces, so that the stylesheet's and the computed value compare. */
const normal = (family: string) => family.replace(/["'\s]/g, '');

/**
 * Every visible element that shows text, grouped by the typeface stack it is
 * drawn in: "prose" or "mono" (the two the stylesheet names) or, for anything
 * else, the stack itself with the elements that use it.
 */
function typefaces(page: Page): Promise<Record<string, string[]>> {
  return page.evaluate(() => {
    const root = getComputedStyle(document.documentElement);
    const clean = (f: string) => f.replace(/["'\s]/g, '');
    const named: Record<string, string> = {
      [clean(root.getPropertyValue('--font-prose'))]: 'prose',
      [clean(root.getPropertyValue('--font-mono'))]: 'mono',
    };
    const found: Record<string, string[]> = {};
    for (const el of document.body.querySelectorAll<HTMLElement>('*')) {
      if (!el.checkVisibility({ visibilityProperty: true })) continue;
      const showsText =
        [...el.childNodes].some((n) => n.nodeType === Node.TEXT_NODE && n.textContent!.trim() !== '') || /^(INPUT|TEXTAREA|SELECT|BUTTON)$/.test(el.tagName);
      if (!showsText) continue;
      const family = clean(getComputedStyle(el).fontFamily);
      const key = named[family] ?? family;
      const label = `${el.tagName.toLowerCase()}${el.className && typeof el.className === 'string' ? `.${el.className.trim().replace(/\s+/g, '.')}` : ''}`;
      (found[key] ??= []).push(`${label} "${(el.textContent ?? '').trim().slice(0, 30)}"`);
    }
    return found;
  });
}

/** The typeface stack one pane's text is drawn in. */
async function paneFace(page: Page, name: string): Promise<string> {
  const [pane, prose, mono] = await Promise.all([
    page
      .getByRole('region', { name, exact: true })
      .locator('pre')
      .evaluate((el) => getComputedStyle(el).fontFamily),
    page.evaluate(() => getComputedStyle(document.documentElement).getPropertyValue('--font-prose')),
    page.evaluate(() => getComputedStyle(document.documentElement).getPropertyValue('--font-mono')),
  ]);
  return normal(pane) === normal(prose) ? 'prose' : normal(pane) === normal(mono) ? 'mono' : pane;
}

test('one typeface system: prose everywhere, monospace only for templates and, by choice, memories, in both themes and both languages', async ({
  page,
}, testInfo) => {
  test.setTimeout(180_000);
  await page.setViewportSize({ width: 1280, height: 900 });
  await page.goto('/');
  await readBook(page, plantedBook(0.5), { chunkTokens: 2000 });
  await page.getByText('Sampling and prompts').click();

  const names = {
    en: { memory: 'Memory', changes: 'Memory changes', section: 'Section', mono: 'Monospace memory' },
    'zh-CN': { memory: '记忆', changes: '记忆变化', section: '片段', mono: '等宽字体显示记忆' },
  } as const;
  for (const language of ['en', 'zh-CN'] as const) {
    await page.getByRole('combobox', { name: /^(Language|语言)$/ }).selectOption(language);
    await expect(page.locator('html')).toHaveAttribute('lang', language);
    for (const theme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme: theme });
      const faces = await typefaces(page);
      // Nothing falls back to the browser's default (a serif, or a bare monospace for <pre>).
      expect(Object.keys(faces).sort(), `${language} ${theme}: ${JSON.stringify(faces, null, 1)}`).toEqual(['mono', 'prose']);
      // Monospace is the prompt templates' only: everything that reads as prose is prose, the panes included.
      expect(
        faces.mono!.every((e) => e.startsWith('textarea')),
        JSON.stringify(faces.mono),
      ).toBe(true);
      const n = names[language];
      for (const pane of [n.memory, n.changes, n.section]) expect(await paneFace(page, pane), `${pane}, ${language} ${theme}`).toBe('prose');
      await page.screenshot({ path: testInfo.outputPath(`typeface-${language}-${theme}.png`) });
    }
  }

  // Monospace memory: the memory and its changes in the monospace face, the book's section still in prose; kept after a reload.
  await page.getByRole('checkbox', { name: names['zh-CN'].mono }).check();
  expect(await paneFace(page, names['zh-CN'].memory)).toBe('mono');
  expect(await paneFace(page, names['zh-CN'].changes)).toBe('mono');
  expect(await paneFace(page, names['zh-CN'].section)).toBe('prose');
  await page.screenshot({ path: testInfo.outputPath('typeface-zh-CN-dark-monospace.png') });
  await page.reload();
  await expect(page.getByRole('checkbox', { name: names['zh-CN'].mono })).toBeChecked();
  expect(await paneFace(page, names['zh-CN'].memory)).toBe('mono');
});
