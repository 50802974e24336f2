import { expect, test } from '@playwright/test';

test('the llama.cpp suggestion is not shown while the model-free engine is chosen', async ({ page }) => {
  await page.goto('/');
  const engine = page.getByRole('combobox', { name: 'Engine' });
  await expect(engine).toHaveValue('extractive');
  await expect(page.getByRole('note', { name: 'CPU engine' })).toHaveCount(0);
  await expect(page.getByRole('region', { name: 'CPU engine' })).toHaveCount(0);
});
