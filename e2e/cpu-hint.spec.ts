import { expect, test } from '@playwright/test';
import { plantedBook } from './helpers';

test('the llama.cpp suggestion is not shown while the model-free engine is chosen', async ({ page }) => {
  await page.goto('/');
  const engine = page.getByRole('combobox', { name: 'Engine' });
  await expect(engine).toHaveValue('extractive');
  await expect(page.getByRole('note', { name: 'CPU engine' })).toHaveCount(0);
  await expect(page.getByRole('region', { name: 'CPU engine' })).toHaveCount(0);
});

test('without WebGPU, the llama.cpp suggestion shows beside WebLLM only, with one alert, and nothing is left on the model-free engine', async ({ page }) => {
  await page.goto('/');
  const engine = page.getByRole('combobox', { name: 'Engine' });
  const hint = page.getByRole('note', { name: 'CPU engine' });
  await engine.selectOption('webllm');
  // The GPU check has answered "none" once the suggestion shows.
  await expect(hint).toHaveCount(1);
  await expect(hint.getByRole('button', { name: 'Use llama.cpp (CPU, WebAssembly)' })).toBeVisible();
  await expect(page.getByRole('alert')).toHaveCount(1);
  // A server runs its model elsewhere: a CPU engine here is no help to it.
  await engine.selectOption('openai');
  await expect(page.getByRole('textbox', { name: 'Base URL', exact: true })).toBeVisible();
  await expect(hint).toHaveCount(0);
  await engine.selectOption('extractive');
  await expect(hint).toHaveCount(0);
  await expect(page.getByRole('alert')).toHaveCount(0);
});

test('the llama.cpp estimate counts the chunks the form counts, then the answer', async ({ page }) => {
  await page.goto('/');
  await page.getByLabel('Document').setInputFiles({ name: 'frankenstein.txt', mimeType: 'text/plain', buffer: plantedBook(0.5) });
  await page.getByText(/frankenstein\.txt — .*tokens/).waitFor();
  await page.getByLabel('Chunk size (tokens)').fill('2000');
  await page.getByRole('combobox', { name: 'Engine' }).selectOption('wllama');
  const estimate = page.getByRole('note', { name: 'Estimate' });
  await expect(estimate).toContainText(/^About \d+ chunks\./);
  const chunks = /^About (\d+) chunks/.exec((await estimate.textContent())!)![1]!;
  await expect(page.getByRole('note', { name: 'CPU engine' })).toContainText(`about ${chunks} chunks and then the answer`);
});
