import { expect, test } from '@playwright/test';
import { plantedBook } from './helpers';
import { openPlace } from './places';

// Runs in the 'webgpu' project (SwiftShader). No model can run here, so the speed WebLLM would measure
// when a model is loaded is written into storage as the app stores it; the page must then use it.

const MODEL = 'Qwen2.5-7B-Instruct-q4f32_1-MLC';

test('a model calibrated on this GPU gives the WebLLM estimate, which says so, and Models shows the speeds', async ({ page }) => {
  await page.goto('/');
  // The book is counted with the extractive engine's tokenizer: WebLLM's would need the model host.
  await page.getByLabel('Document').setInputFiles({ name: 'frankenstein.txt', mimeType: 'text/plain', buffer: plantedBook(0.5) });
  await expect(page.getByText(/frankenstein\.txt — .*tokens/)).toBeVisible();
  const engine = page.getByRole('combobox', { name: 'Engine' });
  await engine.selectOption({ label: 'WebLLM (WebGPU)' });
  await expect(page.getByRole('combobox', { name: 'Model', exact: true })).toHaveValue(MODEL);
  const estimate = page.getByRole('note', { name: 'Estimate' });
  await expect(estimate).toContainText('not measured yet: Load it in Models');

  // The adapter named as the app's WebGPU check names it, so the record is this GPU's.
  await page.evaluate(async (modelId) => {
    const gpu = (navigator as unknown as { gpu: { requestAdapter(o: object): Promise<{ info?: Record<string, string> }> } }).gpu;
    const info = (await gpu.requestAdapter({ powerPreference: 'high-performance' }))?.info ?? {};
    const adapter = [info.vendor, info.architecture].filter(Boolean).join(' ') || info.description || 'unknown GPU';
    const record = {
      modelId,
      adapter,
      prefillTokensPerSecond: 1850,
      decodeTokensPerSecond: 38,
      promptTokens: 1030,
      completionTokens: 48,
      source: 'reported',
      measuredAt: Date.now(),
    };
    await new Promise<void>((resolve, reject) => {
      const open = indexedDB.open('memagent');
      open.onerror = () => reject(open.error);
      open.onsuccess = () => {
        const tx = open.result.transaction('calibrations', 'readwrite');
        tx.objectStore('calibrations').put(record);
        tx.oncomplete = () => {
          open.result.close();
          resolve();
        };
        tx.onerror = () => reject(tx.error);
      };
    });
  }, MODEL);

  // The model list is read once per page: a reload reads it with the speed.
  await page.reload();
  await page.getByLabel('Document').setInputFiles({ name: 'frankenstein.txt', mimeType: 'text/plain', buffer: plantedBook(0.5) });
  await expect(page.getByText(/frankenstein\.txt — .*tokens/)).toBeVisible();
  await engine.selectOption({ label: 'WebLLM (WebGPU)' });
  await expect(estimate).toContainText(
    /About \d+ chunks: .+ of steps \(at most .+ each: reading [\d,]+ tokens at 1,850 tokens\/s and writing up to 1,024 at 38 tokens\/s, calibrated on this GPU when the model was loaded\), and the time to start and answer, which no finished read has measured yet\./,
  );
  await openPlace(page, 'Models');
  await expect(page.getByRole('region', { name: 'Models' })).toContainText('Measured on this GPU: 1,850 tokens/s reading, 38 tokens/s writing');
});

test('Models shows the speculation check recorded for each model on this GPU: exact, or a mismatch that keeps speculation off', async ({ page }) => {
  await page.goto('/');
  await openPlace(page, 'Models');
  const models = page.getByRole('region', { name: 'Models' });
  await expect(models.getByRole('listitem', { name: 'Qwen2.5 7B Instruct (q4f32_1)' })).toBeVisible();
  // Qwen3 is listed beside Qwen2.5, as a model that reads with InfMem only.
  await expect(models.getByRole('listitem', { name: 'Qwen3 4B (q4f32_1)' })).toContainText('Reads with InfMem only');
  await expect(models.getByRole('listitem', { name: 'Qwen2.5 7B Instruct (q4f32_1)' })).not.toContainText('InfMem');

  // Verdicts as the engine keeps them with a model's measured speed, for this GPU; none for the 3B model.
  await page.evaluate(async () => {
    const gpu = (navigator as unknown as { gpu: { requestAdapter(o: object): Promise<{ info?: Record<string, string> }> } }).gpu;
    const info = (await gpu.requestAdapter({ powerPreference: 'high-performance' }))?.info ?? {};
    const adapter = [info.vendor, info.architecture].filter(Boolean).join(' ') || info.description || 'unknown GPU';
    const speed = { adapter, prefillTokensPerSecond: 1850, decodeTokensPerSecond: 38, promptTokens: 1030, completionTokens: 48, source: 'reported' };
    const check = { webllm: '0.2.86', library: 'lib.wasm', checkedAt: Date.now() };
    const records = [
      { ...speed, modelId: 'Qwen2.5-7B-Instruct-q4f32_1-MLC', measuredAt: Date.now(), speculation: { ...check, verdict: 'exact' } },
      { ...speed, modelId: 'Qwen2.5-0.5B-Instruct-q4f32_1-MLC', measuredAt: Date.now(), speculation: { ...check, verdict: 'mismatch' } },
    ];
    await new Promise<void>((resolve, reject) => {
      const open = indexedDB.open('memagent');
      open.onerror = () => reject(open.error);
      open.onsuccess = () => {
        const tx = open.result.transaction('calibrations', 'readwrite');
        for (const r of records) tx.objectStore('calibrations').put(r);
        tx.oncomplete = () => {
          open.result.close();
          resolve();
        };
        tx.onerror = () => reject(tx.error);
      };
    });
  });

  await page.reload();
  await openPlace(page, 'Models');
  await expect(models.getByRole('listitem', { name: 'Qwen2.5 7B Instruct (q4f32_1)' })).toContainText('Speculative writing checked on this GPU: exact');
  await expect(models.getByRole('listitem', { name: 'Qwen2.5 0.5B Instruct (q4f32_1)' }).getByRole('note')).toHaveText(
    'Speculative writing checked on this GPU: it wrote other tokens than plain decoding, so speculation is off for this model.',
  );
  await expect(models.getByRole('listitem', { name: 'Qwen2.5 3B Instruct (q4f32_1)' })).not.toContainText('Speculative writing');
});
