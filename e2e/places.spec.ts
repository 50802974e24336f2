import { expect, test } from '@playwright/test';
import { PLANTED, plantedBook, readBook } from './helpers';
import { openPlace } from './places';

test('the places: a run opened from the Library, Back and Forward, and one storage figure wherever storage shows', async ({ page }) => {
  await page.goto('/');
  await readBook(page, plantedBook(0.5), { chunkTokens: 2000 });
  const runUrl = page.url();
  expect(runUrl).toMatch(/[?&]run=/);

  // The Library lists the run; opening it shows it on the Read page, and Back returns to the Library.
  await openPlace(page, 'Library');
  await expect(page.getByRole('link', { name: 'Library', exact: true })).toHaveAttribute('aria-current', 'page');
  await page
    .getByRole('navigation', { name: 'Runs' })
    .getByRole('button', { name: new RegExp(PLANTED.question.slice(0, 20)) })
    .click();
  await expect(page.getByRole('heading', { level: 1, name: 'Read a book' })).toBeVisible();
  await expect(page.getByRole('region', { name: 'Answer' })).toContainText(PLANTED.code);
  await page.goBack();
  await expect(page.getByRole('heading', { level: 1, name: 'Library' })).toBeVisible();
  await page.goForward();
  await expect(page.getByRole('region', { name: 'Answer' })).toContainText(PLANTED.code);

  // The Library's Storage region and the Models page read the same figure.
  await openPlace(page, 'Library');
  const storage = page.getByRole('region', { name: 'Storage' });
  await expect(storage).toContainText('Offline: ready'); // the app itself is stored: the figure has settled
  const figure = /\d+(\.\d)? (B|KB|MB|GB) used of \d+(\.\d)? (KB|MB|GB) this browser allows this site\./;
  await expect(storage).toContainText(figure);
  const inLibrary = figure.exec((await storage.textContent()) ?? '')![0];
  await openPlace(page, 'Models');
  await expect(page.getByText(figure).filter({ visible: true })).toHaveText(inLibrary);
});
