import { expect, test } from '@playwright/test';
import { PLANTED, plantedBook, readBook } from './helpers';
import { openPlace } from './places';

// Chromium without --enable-unsafe-webgpu has navigator.gpu but no adapter: the "no usable GPU" path.

test('without a usable GPU, WebLLM says why once, in the words Models uses; Read is off beside the reason; nothing is left on Extractive', async ({ page }) => {
  const modelRequests: string[] = [];
  page.on('request', (r) => {
    if (!r.url().startsWith('http://127.0.0.1')) modelRequests.push(r.url());
  });
  await page.goto('/');
  const engine = page.getByRole('combobox', { name: 'Engine' });
  await expect(engine).toHaveValue('extractive');
  await openPlace(page, 'Models');
  const models = page.getByRole('region', { name: 'Models' });
  const why = models.getByText('WebLLM cannot run here');
  await expect(why).toContainText('found no usable GPU');
  await expect(models.getByRole('button')).toHaveCount(0);
  const words = (await why.textContent())!;
  await openPlace(page, 'Read');

  await page.getByLabel('Document').setInputFiles({ name: 'frankenstein.txt', mimeType: 'text/plain', buffer: plantedBook(0.5) });
  await page.getByText(/frankenstein\.txt — .*tokens/).waitFor();
  await page.getByLabel('Question').fill(PLANTED.question);
  await engine.selectOption({ label: 'WebLLM (WebGPU)' });
  // One message, in the same words as Models.
  await expect(page.getByRole('alert')).toHaveText(words);

  // Every WebLLM setting shows, turned off, and says why.
  const model = page.getByRole('combobox', { name: 'Model', exact: true });
  await expect(model).toBeDisabled();
  await expect(model).toHaveAccessibleDescription(words);
  const speculate = page.getByRole('checkbox', { name: 'Speculative writing' });
  await expect(speculate).toBeVisible();
  await expect(speculate).toBeDisabled();
  await expect(speculate).toHaveAccessibleDescription(new RegExp(`^${words.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} Drafts the words`));

  // Read is off, with the reason beside it; the estimate sends nobody to Models, where nothing can be loaded.
  const read = page.getByRole('button', { name: 'Read' });
  await expect(read).toBeDisabled();
  await expect(read).toHaveAccessibleDescription('WebLLM (WebGPU) cannot run in this browser, so Read is off: choose another engine under Engine.');
  const estimate = page.getByRole('note', { name: 'Estimate' });
  await expect(estimate).toHaveText(/^About \d+ chunks\. No time to expect: this engine cannot run in this browser\.$/);
  // Enter in a field does not read either (the form's Read is off), so no second message comes.
  await page.getByLabel('Chunk size (tokens)').press('Enter');
  await expect(page.getByRole('alert')).toHaveCount(1);
  expect(modelRequests).toEqual([]);

  await engine.selectOption({ label: 'Extractive (no model)' });
  await expect(page.getByRole('alert')).toHaveCount(0);
  await expect(read).toBeEnabled();
  await expect(read).not.toHaveAttribute('aria-describedby');
  await readBook(page, plantedBook(0.5));
  await expect(page.getByRole('region', { name: 'Answer' })).toContainText(PLANTED.code);
  expect(modelRequests).toEqual([]);
});

test('without a usable GPU, the hint under several questions says how many go together on WebLLM cannot be worked out, and why', async ({ page }) => {
  await page.goto('/');
  await page.getByRole('combobox', { name: 'Engine' }).selectOption({ label: 'WebLLM (WebGPU)' });
  await page.getByLabel('Question', { exact: true }).fill(PLANTED.question);
  await page.getByRole('button', { name: 'Add a question' }).click();
  await page.keyboard.type('Who wrote the letters?');
  const why = 'How many of the 2 questions go together cannot be worked out here: it depends on the GPU, and this browser has none that can run this model.';
  await expect(page.getByRole('textbox', { name: 'Question 2', exact: true })).toHaveAccessibleDescription(why);
  await expect(page.getByRole('textbox', { name: 'Question', exact: true })).toHaveAccessibleDescription(why);
});
