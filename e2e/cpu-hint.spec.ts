import { expect, test } from '@playwright/test';

test('the llama.cpp suggestion is not shown while the model-free engine is chosen', async ({ page }) => {
  await page.goto('/');
  const engine = page.getByRole('combobox', { name: 'Engine' });
  await expect(engine).toHaveValue('extractive');
  await expect(page.getByRole('note', { name: 'CPU engine' })).toHaveCount(0);
  await expect(page.getByRole('region', { name: 'CPU engine' })).toHaveCount(0);
});

test('without WebGPU, the llama.cpp suggestion shows beside a model engine and goes once the model-free engine is chosen', async ({ page }) => {
  await page.goto('/');
  const engine = page.getByRole('combobox', { name: 'Engine' });
  const hint = page.getByRole('note', { name: 'CPU engine' });
  await engine.selectOption('openai');
  // The GPU check has answered "none" once the suggestion shows.
  await expect(hint).toHaveCount(1);
  await engine.selectOption('extractive');
  await expect(hint).toHaveCount(0);
});
