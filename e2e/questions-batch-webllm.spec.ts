import { expect, type Page, test } from '@playwright/test';
import { openPlace } from './places';

// Runs in the 'webgpu' project (SwiftShader): the stand-in model is downloaded from the test host, never
// loaded. Its config carries Qwen2.5-0.5B's sizes (24 KiB of KV cache a token); a model added by URL has
// no weights' size listed, so the KV budget is the 1 GiB floor.

const MODEL_HOST = `http://127.0.0.1:${Number(process.env.E2E_MODEL_PORT ?? Number(process.env.E2E_PORT ?? 4173) + 22)}`;

async function downloadTestModel(page: Page): Promise<void> {
  await openPlace(page, 'Models');
  const region = page.getByRole('region', { name: 'Models' });
  await region.getByText('Add a model by URL').click();
  await region.getByLabel('Model name').fill('Test model');
  await region.getByLabel('Model URL').fill(`${MODEL_HOST}/m/good`);
  await region.getByLabel('Model library URL').fill(`${MODEL_HOST}/lib/qwen2-7b-test.wasm`);
  await region.getByRole('button', { name: 'Add model' }).click();
  await region.getByRole('button', { name: 'Download Test model', exact: true }).click();
  await expect(region.getByRole('listitem', { name: 'Test model' })).toContainText('Downloaded', { timeout: 30_000 });
}

/** A question box: the hint under the boxes is its description. */
const questionBox = (page: Page, n: number) => page.getByRole('textbox', { name: n === 1 ? 'Question' : `Question ${n}`, exact: true });

async function addQuestions(page: Page, upTo: number): Promise<void> {
  // Counted once the first box is there (count() does not wait). Where focus goes is the questions specs' to check:
  // here each new box is filled by its name.
  await expect(questionBox(page, 1)).toBeVisible();
  for (let n = (await page.getByRole('textbox', { name: /^Question/ }).count()) + 1; n <= upTo; n++) {
    await page.getByRole('button', { name: 'Add a question' }).click();
    await questionBox(page, n).fill(`Who rang the bell the ${n}th time?`);
  }
}

test.beforeEach(async ({ request }) => {
  await request.post(`${MODEL_HOST}/__reset`);
});

test('the Read form says how many WebLLM questions go together on this GPU and why, once the model is downloaded, and follows the questions and sizes', async ({
  page,
}) => {
  await page.goto('/');
  await page.getByRole('combobox', { name: 'Engine' }).selectOption({ label: 'WebLLM (WebGPU)' });
  await page.getByLabel('Question', { exact: true }).fill('Who rang the bell?');
  await addQuestions(page, 2);
  // The default model is not downloaded here: nothing is fetched to tell, and the hint says when it will be told.
  await expect(questionBox(page, 1)).toHaveAccessibleDescription(/How many go together on this GPU is worked out once the model is downloaded/);

  await downloadTestModel(page);
  await openPlace(page, 'Read');
  await page.getByRole('combobox', { name: 'Model', exact: true }).selectOption('custom:Test model');
  // About 7,200 tokens a question × 24 KiB ≈ 170 MiB: four fit the 1 GiB budget less WebLLM's own cache (its 8,192-token
  // window, 192 MiB), so both questions go together.
  const four = /4 questions of [\d,]+ tokens fit the 1\.0 GiB KV budget of this GPU, less 192 MiB for WebLLM's own cache \(24 KiB a token\)\./;
  await expect(questionBox(page, 2)).toHaveAccessibleDescription(new RegExp(`^All 2 questions go together on this GPU: ${four.source}`));
  await expect(questionBox(page, 1)).toHaveAccessibleDescription(new RegExp(`^All 2 questions go together on this GPU: ${four.source}`));

  await addQuestions(page, 7);
  await expect(questionBox(page, 7)).toHaveAccessibleDescription(
    new RegExp(`^Up to 4 questions go together on this GPU: ${four.source} So the 7 questions are read in groups of 4:`),
  );

  // A larger memory makes every step longer (the memory and the reply): fewer questions fit.
  await page.getByRole('spinbutton', { name: 'Memory size (tokens)' }).fill('4096');
  await expect(questionBox(page, 7)).toHaveAccessibleDescription(
    /^Up to 2 questions go together on this GPU: 2 questions of 1[3-4],\d{3} tokens fit the 1\.0 GiB KV budget of this GPU, less 3[0-9]{2} MiB for WebLLM's own cache \(24 KiB a token\)\. So the 7 questions are read in groups of 2:/,
  );
  // Back to one question: the hint goes, and the box is described by nothing.
  for (let n = 7; n > 1; n--) await page.getByRole('button', { name: `Remove question ${n}` }).click();
  await expect(questionBox(page, 1)).toHaveAccessibleDescription('');
});
