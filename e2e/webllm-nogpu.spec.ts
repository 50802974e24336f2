import { expect, test } from '@playwright/test';
import { PLANTED, plantedBook, readBook } from './helpers';
import { openPlace } from './places';

// Chromium without --enable-unsafe-webgpu has navigator.gpu but no adapter: the "no WebGPU" path.

test('without WebGPU: choosing WebLLM names the browsers that have it, nothing is downloaded, and the extractive engine still reads', async ({ page }) => {
  const modelRequests: string[] = [];
  page.on('request', (r) => {
    if (!r.url().startsWith('http://127.0.0.1')) modelRequests.push(r.url());
  });
  await page.goto('/');
  const engine = page.getByRole('combobox', { name: 'Engine' });
  await expect(engine).toHaveValue('extractive');
  await openPlace(page, 'Models');
  await expect(page.getByRole('region', { name: 'Models' })).toContainText('No WebGPU in this browser');
  await expect(page.getByRole('region', { name: 'Models' }).getByRole('button')).toHaveCount(0);
  await openPlace(page, 'Read');

  await engine.selectOption({ label: 'WebLLM (WebGPU)' });
  const alert = page.getByRole('alert').filter({ hasText: 'WebGPU' });
  await expect(alert).toContainText('Chrome or Edge 113');
  await expect(alert).toContainText('Safari 26');
  await expect(alert).toContainText('Firefox 141');
  await expect(alert).toContainText('Extractive (no model)');

  // A read on WebLLM is refused before anything is fetched.
  await page.getByLabel('Document').setInputFiles({ name: 'frankenstein.txt', mimeType: 'text/plain', buffer: plantedBook(0.5) });
  await page.getByText(/frankenstein\.txt — .*tokens/).waitFor();
  await page.getByLabel('Question').fill(PLANTED.question);
  await page.getByRole('button', { name: 'Read' }).click();
  await expect(page.getByRole('alert').filter({ hasText: 'cannot run here' })).toHaveCount(2);
  expect(modelRequests).toEqual([]);

  await engine.selectOption({ label: 'Extractive (no model)' });
  await expect(page.getByRole('alert').filter({ hasText: 'Chrome or Edge 113' })).toHaveCount(1); // the refusal stays until the next action
  await readBook(page, plantedBook(0.5));
  await expect(page.getByRole('region', { name: 'Answer' })).toContainText(PLANTED.code);
});
