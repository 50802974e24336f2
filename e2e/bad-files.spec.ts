import { expect, type Page, test } from '@playwright/test';

/** Files a person may choose by mistake: each must be refused where they look, with focus on the reason. */
const BAD_FILES = [
  { what: 'an empty file', name: 'empty.txt', mimeType: 'text/plain', buffer: Buffer.alloc(0) },
  {
    what: 'a program renamed .txt',
    name: 'program.txt',
    mimeType: 'text/plain',
    buffer: Buffer.from([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1, 0, ...new Array<number>(600).fill(0)]),
  },
  {
    what: 'a PNG renamed .txt',
    name: 'picture.txt',
    mimeType: 'text/plain',
    buffer: Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52, ...new Array<number>(400).fill(0)]),
  },
];

function pageErrors(page: Page): Error[] {
  const errors: Error[] = [];
  page.on('pageerror', (e) => errors.push(e));
  return errors;
}

for (const size of [
  { name: 'desktop', width: 1280, height: 800 },
  { name: 'phone', width: 360, height: 740 },
]) {
  for (const file of BAD_FILES) {
    test(`${file.what} on the Read form is refused beside the picker, announced and focused (${size.name})`, async ({ page }) => {
      await page.setViewportSize(size);
      const errors = pageErrors(page);
      await page.goto('/');
      await page.getByLabel('Document').setInputFiles(file);
      const alert = page.getByRole('alert');
      await expect(alert).toBeVisible();
      await expect(alert).toContainText(/\S/);
      await expect(alert).toBeFocused();
      // Seen without scrolling: inside the window, just under the picker.
      const box = (await alert.boundingBox())!;
      expect(box.y).toBeGreaterThanOrEqual(0);
      expect(box.y + box.height).toBeLessThanOrEqual(size.height);
      const picker = (await page.getByLabel('Document').boundingBox())!;
      expect(box.y).toBeGreaterThan(picker.y);
      expect(box.y - (picker.y + picker.height)).toBeLessThan(200);
      expect(errors.map((e) => e.message)).toEqual([]);
    });
  }
}
