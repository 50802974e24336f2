import { expect, test } from '@playwright/test';
import { openPlace } from './places';

const book = (name: string) => ({
  name,
  mimeType: 'text/plain',
  buffer: Buffer.from(`${`${name} begins here, and the harbour was quiet that spring. `.repeat(60)}\n`),
});

test('the Document picker names the book the form holds, also one opened from the Library', async ({ page }) => {
  await page.goto('/');
  const picker = page.getByLabel('Document', { exact: true });
  await expect(picker).toHaveAccessibleDescription('No book chosen');
  await picker.setInputFiles(book('harbour.txt'));
  await expect(picker).toHaveAccessibleDescription('harbour.txt');
  await expect(page.getByText('harbour.txt', { exact: true }).first()).toBeVisible();
  // The browser's own "No file chosen" is not drawn beside it.
  const box = (await picker.boundingBox())!;
  expect(box.width * box.height).toBeLessThanOrEqual(1);

  await picker.setInputFiles(book('lighthouse.txt'));
  await expect(picker).toHaveAccessibleDescription('lighthouse.txt');
  await openPlace(page, 'Library');
  await page.getByRole('listitem').filter({ hasText: 'harbour.txt' }).getByRole('button', { name: 'Open', exact: true }).click();
  await expect(page.getByRole('heading', { level: 1, name: 'Read a book' })).toBeVisible();
  await expect(picker).toHaveAccessibleDescription('harbour.txt');
});

for (const width of [360, 1280]) {
  test(`"Add a book from the Library" shows its whole choice at ${width} px`, async ({ page }) => {
    await page.setViewportSize({ width, height: 900 });
    await page.goto('/');
    const picker = page.getByLabel('Document', { exact: true });
    await picker.setInputFiles(book('harbour.txt'));
    await expect(picker).toHaveAccessibleDescription('harbour.txt');
    await picker.setInputFiles(book('lighthouse.txt'));
    await expect(picker).toHaveAccessibleDescription('lighthouse.txt');
    const choice = page.getByRole('combobox', { name: 'Add a book from the Library' });
    await expect(choice).toHaveValue('');
    // The choice's own words fit inside it, beside the arrow the browser draws.
    const fits = await choice.evaluate((select: HTMLSelectElement) => {
      const style = getComputedStyle(select);
      const canvas = document.createElement('canvas').getContext('2d')!;
      canvas.font = `${style.fontWeight} ${style.fontSize} ${style.fontFamily}`;
      const text = canvas.measureText(select.selectedOptions[0]!.text).width;
      return { text, room: select.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight) - 20 };
    });
    expect(fits.room).toBeGreaterThanOrEqual(fits.text);
    // Nothing wider than the window.
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(width);
  });
}

test('dragging files over the page shows where to drop them, until they leave', async ({ page }) => {
  await page.goto('/');
  const files = await page.evaluateHandle(() => {
    const data = new DataTransfer();
    data.items.add(new File(['A short book.'], 'short.txt', { type: 'text/plain' }));
    return data;
  });
  const main = page.getByRole('heading', { name: 'Read a book' });
  await expect(page.getByText('Drop the books here to read them')).toHaveCount(0);
  await main.dispatchEvent('dragenter', { dataTransfer: files });
  await expect(page.getByRole('status').filter({ hasText: 'Drop the books here to read them' })).toBeVisible();
  await main.dispatchEvent('dragleave', { dataTransfer: files });
  await expect(page.getByText('Drop the books here to read them')).toHaveCount(0);
});
