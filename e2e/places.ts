import { expect, type Page } from '@playwright/test';

/** The app's places: the link in the top navigation and the heading of the page it opens. */
export const PLACES = [
  { id: 'read', link: 'Read', heading: 'Read a book' },
  { id: 'library', link: 'Library', heading: 'Library' },
  { id: 'models', link: 'Models', heading: 'Models' },
  { id: 'evaluate', link: 'Evaluate', heading: 'Evaluate' },
] as const;

export type PlaceName = (typeof PLACES)[number]['link'];

/** Goes to a place as a person does: its link in the top navigation. */
export async function openPlace(page: Page, name: PlaceName): Promise<void> {
  const place = PLACES.find((p) => p.link === name)!;
  await page.getByRole('navigation', { name: 'Pages' }).getByRole('link', { name, exact: true }).click();
  await expect(page.getByRole('heading', { level: 1, name: place.heading, exact: true })).toBeVisible();
}

/** Ticks exactly `names` in the checkbox group `group`. */
export async function tickOnly(page: Page, group: string, names: readonly string[]): Promise<void> {
  const boxes = page.getByRole('group', { name: group }).getByRole('checkbox');
  for (const box of await boxes.all()) await box.uncheck();
  for (const name of names) await page.getByRole('group', { name: group }).getByRole('checkbox', { name, exact: true }).check();
}

/** One sample of one task at 8K with the extractive engine: a results table and chart in a second or two. */
export async function smallEvaluation(page: Page): Promise<void> {
  await openPlace(page, 'Evaluate');
  await tickOnly(page, 'Tasks', ['Needle in noise: a number']);
  await tickOnly(page, 'Lengths (tokens)', ['8K']);
  await page.getByLabel('Samples per cell').fill('1');
  await page.getByRole('button', { name: 'Start evaluation' }).click();
  await expect(page.getByText(/^Done · 1 of 1 samples/)).toBeVisible({ timeout: 60_000 });
}
