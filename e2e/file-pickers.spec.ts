import { expect, type Locator, type Page, test } from '@playwright/test';
import { openPlace } from './places';

const book = (name: string) => ({
  name,
  mimeType: 'text/plain',
  buffer: Buffer.from(`${`${name} begins here, and the harbour was quiet that spring. `.repeat(60)}\n`),
});

/** Presses `key` on `button` (focused by the press itself, as the page stands then) and gives the file dialog it opened. */
async function openWithKey(page: Page, button: Locator, key: 'Enter' | ' ') {
  const chooser = page.waitForEvent('filechooser');
  await button.press(key === ' ' ? 'Space' : key);
  return chooser;
}

/** What makes a control look the way it does, as the browser draws it. */
function look(control: Locator) {
  return control.evaluate((el) => {
    const s = getComputedStyle(el);
    return {
      background: s.backgroundColor,
      color: s.color,
      border: `${s.borderTopWidth} ${s.borderTopStyle} ${s.borderTopColor}`,
      radius: s.borderTopLeftRadius,
    };
  });
}

test('"Choose a book…", "Add books" and "Import run" are buttons that open the file dialog from the keyboard, drawn alike in both themes', async ({ page }) => {
  await page.goto('/');
  const choose = page.getByRole('button', { name: 'Choose a book…' });
  await expect(choose).toHaveAccessibleDescription('No book chosen');
  let chooser = await openWithKey(page, choose, 'Enter');
  expect(chooser.isMultiple()).toBe(true);
  await chooser.setFiles(book('harbour.txt'));
  const another = page.getByRole('button', { name: 'Choose another…' });
  await expect(another).toHaveAccessibleDescription('harbour.txt');

  const add = page.getByRole('button', { name: 'Add books' });
  chooser = await openWithKey(page, add, ' ');
  await chooser.setFiles(book('lighthouse.txt'));
  await expect(page.getByRole('list', { name: 'Books to read, in order' }).getByRole('listitem')).toHaveCount(2);
  await expect(another).toHaveAccessibleDescription('harbour.txt, lighthouse.txt');

  // The file inputs behind the buttons keep their labels, and take no room: the browser's own "Choose Files" is never drawn.
  for (const label of ['Document', 'Add books']) expect((await page.getByLabel(label, { exact: true }).boundingBox())!.height).toBeLessThanOrEqual(1);

  await openPlace(page, 'Library');
  const importRun = page.getByRole('button', { name: 'Import run' });
  chooser = await openWithKey(page, importRun, 'Enter');
  expect(chooser.isMultiple()).toBe(false);
  await chooser.setFiles({ name: 'broken.json', mimeType: 'application/json', buffer: Buffer.from('{"format":"memagent-run","version":1,"run":{}}') });
  await expect(page.getByRole('alert')).toContainText('not a valid memagent-web run export');
  expect((await page.getByLabel('Import run', { exact: true }).boundingBox())!.height).toBeLessThanOrEqual(1);

  // One look for the three, in the light theme and the dark.
  for (const theme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme: theme });
    const library = await look(importRun);
    await openPlace(page, 'Read');
    expect(await look(another), theme).toEqual(library);
    expect(await look(add), theme).toEqual(library);
    await openPlace(page, 'Library');
  }
});
