import { expect, type Page, test } from '@playwright/test';
import { openPlace } from './places';

const book = { name: 'kept.txt', mimeType: 'text/plain', buffer: Buffer.from('A short book about a lighthouse keeper. '.repeat(300)) };

async function addBook(page: Page): Promise<void> {
  await page.getByLabel('Document').setInputFiles(book);
  await openPlace(page, 'Library');
  await expect(page.getByRole('listitem', { name: book.name })).toBeVisible();
}

/** The app opens at the Library and has listed what it stores. */
async function reopen(page: Page): Promise<void> {
  await page.reload();
  await openPlace(page, 'Library');
  await expect(page.getByRole('region', { name: 'Library' })).toContainText('No documents yet');
}

test('an empty library says the books are gone when the browser deleted the database, until dismissed', async ({ page }) => {
  await page.goto('/');
  const notice = page.getByRole('alert', { name: 'Books gone' });

  // A library the person emptied is no loss.
  await addBook(page);
  await page.getByRole('listitem', { name: book.name }).getByRole('button', { name: 'Delete' }).click();
  await page.getByRole('group', { name: 'Confirm delete' }).getByRole('button', { name: 'Yes, delete' }).click();
  // Deleted as the person sees it (a reload before the worker has deleted keeps the book).
  await expect(page.getByRole('listitem', { name: book.name })).toHaveCount(0);
  await reopen(page);
  await expect(notice).toHaveCount(0);

  // What Chromium does to a database it finds damaged after a crash: it is gone when the app opens again.
  await openPlace(page, 'Read');
  await addBook(page);
  await expect(notice).toHaveCount(0);
  await page.evaluate(
    () =>
      new Promise<void>((resolve, reject) => {
        const request = indexedDB.deleteDatabase('memagent');
        request.onsuccess = () => resolve();
        request.onerror = () => reject(request.error);
      }),
  );
  await reopen(page);
  await expect(notice).toContainText("the browser deleted this site's database");
  await expect(notice).toContainText('Add the books again');
  // On every page, and after another reload, until it is dismissed.
  await openPlace(page, 'Read');
  await expect(notice).toBeVisible();
  await reopen(page);
  await expect(notice).toBeVisible();

  await notice.getByRole('button', { name: 'Dismiss' }).click();
  await expect(notice).toHaveCount(0);
  await reopen(page);
  await expect(notice).toHaveCount(0);
});
