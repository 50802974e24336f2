import { expect, test } from '@playwright/test';
import { PLANTED, plantedBook } from './helpers';
import { openPlace } from './places';
import { expectPrivate, watchTraffic } from './privacy';

// Runs in the 'webgpu' project (its name ends like webllm.spec.ts): the Models region offers downloads only with an adapter.

const PROMPT_FILES_AT = 'https://raw.githubusercontent.com/BytedTsinghua-SIA/MemAgent/76b7a658988e4ea53d7388a62de6c0ce79084146/';
const MODEL_HOST = `http://127.0.0.1:${Number(process.env.E2E_MODEL_PORT ?? Number(process.env.E2E_PORT ?? 4173) + 22)}`;

test('a WebLLM model download, with a book in the library, talks only to the origin and the model host, and sends no book text', async ({
  page,
  context,
  baseURL,
}) => {
  const traffic = await watchTraffic(context);
  await page.goto('/');
  // A book and a question are in the app while the model downloads: none of it may ride along.
  await page.getByLabel('Document').setInputFiles({ name: 'frankenstein.txt', mimeType: 'text/plain', buffer: plantedBook(0.5) });
  await page.getByText(/frankenstein\.txt — .*tokens/).waitFor();
  await page.getByLabel('Question').fill(PLANTED.question);

  await openPlace(page, 'Models');
  const models = page.getByRole('region', { name: 'Models' });
  await models.getByText('Add a model by URL').click();
  await models.getByLabel('Model name').fill('Private model');
  await models.getByLabel('Model URL').fill(`${MODEL_HOST}/m/good`);
  await models.getByLabel('Model library URL').fill(`${MODEL_HOST}/lib/qwen2-7b-test.wasm`);
  await models.getByRole('button', { name: 'Add model' }).click();
  const row = models.getByRole('listitem', { name: 'Private model' });
  await row.getByRole('button', { name: 'Download Private model', exact: true }).click();
  await expect(row).toContainText('Downloaded', { timeout: 60_000 });

  const fromHost = traffic.requests.filter((r) => r.url.startsWith(`${MODEL_HOST}/`));
  expect(fromHost.map((r) => new URL(r.url).pathname)).toEqual(
    expect.arrayContaining(['/m/good/resolve/main/tensor-cache.json', '/m/good/resolve/main/params_shard_0.bin']),
  );
  expect(fromHost.every((r) => r.method === 'GET' || r.method === 'HEAD' || r.method === 'OPTIONS')).toBe(true);
  // A model download also fetches MemAgent's two prompt files, at the pinned commit: plain GETs of public files.
  const prompts = traffic.requests.filter((r) => r.url.startsWith(PROMPT_FILES_AT));
  expect(prompts.map((r) => `${r.method} ${r.url.slice(PROMPT_FILES_AT.length)}`).sort()).toEqual([
    'GET taskutils/memory_eval/utils/recurrent.py',
    'GET taskutils/memory_eval/utils/recurrent_boxed.py',
  ]);
  await expectPrivate({ ...traffic, requests: traffic.requests.filter((r) => !prompts.includes(r)) }, [new URL(baseURL!).origin, MODEL_HOST]);
});
