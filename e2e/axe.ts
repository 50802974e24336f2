import AxeBuilder from '@axe-core/playwright';
import type { Page } from '@playwright/test';

/** Axe's serious and critical findings on what the page shows now, one line each. */
export async function seriousViolations(page: Page): Promise<string[]> {
  const result = await new AxeBuilder({ page })
    // Touch targets of at least 24 px (WCAG 2.2) are checked too.
    .options({ rules: { 'target-size': { enabled: true } } })
    .analyze();
  return result.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map(
      (v) =>
        `${v.id} (${v.impact}): ${v.help} — ${v.nodes
          .slice(0, 4)
          .map((n) => `${n.target.join(' ')}: ${n.failureSummary?.split('\n')[1]?.trim() ?? ''}`)
          .join(' | ')}`,
    );
}

/** Axe's serious findings on what the page shows now, in the light and the dark theme, each line naming where and in which. */
export async function violationsInBothThemes(page: Page, where: string): Promise<string[]> {
  const found: string[] = [];
  for (const theme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme: theme });
    for (const v of await seriousViolations(page)) found.push(`${where}, ${theme} theme: ${v}`);
  }
  await page.emulateMedia({ colorScheme: null });
  return found;
}
