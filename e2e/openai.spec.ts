import { expect, type Page, test } from '@playwright/test';
import { startOpenAIServer } from '../test/support/openai-server';
import {
  chooseServer,
  connectServer,
  ownOpenAIServer,
  PLANTED,
  plantedBook,
  range,
  readBook,
  storedRevisionIndexes,
  storedRecords,
  storedRunsAndRevisions,
  tickOnly,
} from './helpers';

// The port playwright.config.ts gives the test server that allows the page's origin.
const pagePort = Number(process.env.E2E_PORT ?? 4173);
const openaiPort = Number(process.env.E2E_OPENAI_PORT ?? pagePort + 17);
const SERVER = `http://127.0.0.1:${openaiPort}/v1`;
const KEY = 'sk-e2e-kept-local';

test('reads a book through an OpenAI-compatible server, retrying a busy one', async ({ page, request }) => {
  const stats = async () => (await (await request.get(`http://127.0.0.1:${openaiPort}/__test/stats`)).json()) as { chatCompletions: number };
  const before = (await stats()).chatCompletions;
  await page.goto('/');
  await chooseServer(page, SERVER, KEY);
  await expect(page.getByRole('status').filter({ hasText: 'Connected' })).toContainText(
    'Connected: memagent-test (context window 32,768 tokens, token counts from the server)',
  );
  await expect(page.getByRole('combobox', { name: 'Model', exact: true })).toHaveValue('memagent-test');

  // The first step meets a busy server and is repeated after its Retry-After.
  await request.post(`http://127.0.0.1:${openaiPort}/__test/fail`, { data: { failures: [{ kind: 429, retryAfter: 0.2 }] } });
  await readBook(page, plantedBook(0.6));
  await expect(page.getByRole('region', { name: 'Answer' })).toContainText(PLANTED.code);

  const progress = page.getByRole('progressbar', { name: 'Reading progress' });
  const max = Number(await progress.getAttribute('aria-valuemax'));
  expect(max).toBeGreaterThan(10);
  expect(Object.values(await storedRevisionIndexes(page))).toEqual([range(max)]);
  // Every chunk and the answer went to the server, once each.
  expect((await stats()).chatCompletions - before).toBe(max + 1);
  const stored = await storedRunsAndRevisions<unknown, { retries: number }>(page);
  const retries = stored.revisions.map((r) => r.retries);
  expect(retries[0]).toBe(1);
  expect(retries.slice(1).every((r) => r === 0)).toBe(true);
  // The run keeps the server's address to resume with, never the key.
  const runs = JSON.stringify(stored.runs);
  expect(runs).toContain(SERVER);
  expect(runs).not.toContain(KEY);
});

test('an evaluation sweep from the Evaluate page reads through the server with the key typed into its settings', async ({ page, request }) => {
  // The server answers nothing without the key: every completion it counts came with it.
  expect((await request.get(`${SERVER}/models`)).status()).toBe(401);
  const stats = async () => (await (await request.get(`http://127.0.0.1:${openaiPort}/__test/stats`)).json()) as { chatCompletions: number };
  const before = (await stats()).chatCompletions;
  await page.goto('/');
  await page.getByRole('link', { name: 'Evaluate' }).click();
  await expect(page.getByRole('heading', { level: 1, name: 'Evaluate' })).toBeVisible();
  // The Read form's own server settings, on this page too.
  await chooseServer(page, SERVER, KEY);
  await expect(page.getByRole('status').filter({ hasText: 'Connected' })).toContainText('Connected: memagent-test');
  await tickOnly(page, 'Tasks', ['Needle in noise: a number']);
  await tickOnly(page, 'Lengths (tokens)', ['8K']);
  await page.getByLabel('Samples per cell').fill('1');
  await page.getByRole('button', { name: 'Start evaluation' }).click();

  await expect(page.getByText(/^Done · 1 of 1 samples/)).toBeVisible();
  await expect(page.getByRole('table', { name: 'Results' }).getByRole('row', { name: /niah_single_1/ })).toContainText('1/1');
  // Each chunk of the 8K haystack and the answer went to the server.
  expect((await stats()).chatCompletions - before).toBeGreaterThanOrEqual(3);
  // The sweep keeps the server's address to resume with, never the key.
  const stored = JSON.stringify(await storedRecords(page, 'evaluations'));
  expect(stored).toContain(SERVER);
  expect(stored).not.toContain(KEY);
});

test('the memory being written shows while a step streams, and goes once the step is stored', async ({ page }) => {
  // A server of the test's own: the third step's reply stops after its first piece until the test lets it go on.
  const server = await ownOpenAIServer();
  try {
    await page.goto('/');
    await connectServer(page, server.url);
    let steps = 0;
    const held = server.hold(() => ++steps === 3, 'first piece');
    await readBook(page, plantedBook(0.6), { chunkTokens: 2000, wait: false });
    await held;
    const writing = page.getByRole('region', { name: 'Writing memory' });
    // The heading, then the reply's first piece: the text so far, while the step is in flight.
    await expect(writing).toHaveText(/^Writing the memory for chunk 3\s*\S+$/);
    server.release();
    await expect(page.getByRole('region', { name: 'Answer' })).toContainText(PLANTED.code);
    await expect(writing).toHaveCount(0);
  } finally {
    await server.stop();
  }
});

test("a server that does not allow the page's origin: the alert says what to configure", async ({ page }) => {
  // A server of its own, on a free port, that sends no CORS headers at all.
  const refusing = await startOpenAIServer({ allowedOrigin: null });
  try {
    await page.goto('/');
    await chooseServer(page, refusing.url);
    await expectCorsAlert(page);
  } finally {
    await refusing.stop();
  }
});

async function expectCorsAlert(page: Page): Promise<void> {
  const alert = page.getByRole('alert');
  await expect(alert).toContainText('(CORS)');
  await expect(alert).toContainText(`this page's origin, http://127.0.0.1:${pagePort}`);
  await expect(alert).toContainText(`--allowed-origins '["http://127.0.0.1:${pagePort}"]'`);
  await expect(alert).toContainText(`OLLAMA_ORIGINS=http://127.0.0.1:${pagePort}`);
}

test("a server the app's Content Security Policy does not list: the alert says how to reach it", async ({ page }) => {
  await page.goto('/');
  const policy = await page
    .locator('meta[http-equiv="Content-Security-Policy"]')
    .getAttribute('content')
    .catch(() => null);
  test.skip(!policy, 'this build has no Content Security Policy');
  // Loopback, but not an address the policy lists (127.0.0.1, localhost): as a server on another machine would be.
  const elsewhere = await startOpenAIServer({ host: '127.0.0.2' });
  try {
    await chooseServer(page, elsewhere.url);
    const alert = page.getByRole('alert');
    await expect(alert).toContainText(`Content Security Policy does not let it connect to http://127.0.0.2:${elsewhere.port}`);
    await expect(alert).toContainText('ssh -L 8000:127.0.0.1:8000');
    await expect(alert).toContainText(`MEMAGENT_CONNECT_SRC=http://127.0.0.2:${elsewhere.port}`);
  } finally {
    await elsewhere.stop();
  }
});
