import { fileURLToPath } from 'node:url';
import { expect, type Page, test } from '@playwright/test';
import { PLANTED, storedCounts } from './helpers';

const pagePort = Number(process.env.E2E_PORT ?? 4173);
const SERVER = `http://127.0.0.1:${Number(process.env.E2E_OPENAI_PORT ?? pagePort + 17)}/v1`;
/** The fixtures server: it holds no MemAgent files, so a mirror there answers 404. */
const EMPTY_MIRROR = `http://127.0.0.1:${Number(process.env.E2E_FIXTURES_PORT ?? pagePort + 25)}/no-memagent-here`;
// Written for the tests in the shape of MemAgent's recurrent.py, with sentences of our own: not the pinned file.
const STANDIN = fileURLToPath(new URL('../test/fixtures/prompt-files/recurrent.py', import.meta.url));

const BOOK = Buffer.from(`The harbour was quiet that morning.\n\n${PLANTED.sentence}\n\nThe ferry left at noon.\n`);

async function openPrompts(page: Page) {
  const settings = page.getByRole('region', { name: 'Settings' });
  await settings.getByText('Sampling and prompts').click();
  return settings;
}

test('the MemAgent prompt files: refused unless pinned, the app’s wording stands in and the run says so, a chosen set is remembered', async ({ page }) => {
  await page.goto('/');
  const settings = await openPrompts(page);
  const files = settings.getByRole('region', { name: 'Prompt files' });
  await expect(files).toContainText("recurrent.py (the authors' prompt file): not fetched yet.");
  // What is fetched, from where, why, and that the book stays here.
  await expect(files).toContainText(
    "MemAgent (paper) and MemAgent (boxed) use the authors' own prompt wording, which this app does not ship. So the app fetches their prompt file (recurrent.py or recurrent_boxed.py, the Python file that holds their prompt templates) from the authors' repository on GitHub, BytedTsinghua-SIA/MemAgent, at the pinned commit 76b7a65",
  );
  await expect(files).toContainText('The request asks for that file alone: no book, question or memory goes with it.');
  await expect(settings.getByRole('combobox', { name: 'Prompt set' })).toHaveValue('auto');
  await expect(settings.getByText("The extractive engine reads no instructions: this app's wording.")).toBeVisible();

  // A mirror without the files: the fetch fails and says where it looked.
  await settings.getByLabel('Prompt file mirror').fill(EMPTY_MIRROR);
  await settings.getByLabel('Prompt file mirror').press('Enter');
  await settings.getByRole('button', { name: 'Fetch prompt files' }).click();
  await expect(settings.getByRole('alert')).toContainText(`${EMPTY_MIRROR}/taskutils/memory_eval/utils/recurrent.py could not be fetched (HTTP 404)`);

  // A local copy that is not the pinned file is refused whole, with its hash.
  const chooser = page.waitForEvent('filechooser');
  await settings.getByRole('button', { name: 'Import prompt file' }).click();
  await (await chooser).setFiles(STANDIN);
  await expect(settings.getByRole('alert')).toContainText(
    /"recurrent\.py" was refused: its SHA-256 is [0-9a-f]{64}, which is not that of recurrent\.py \(1e0082a7a85a97663eb5e747ae7d925c153acab8f403c026b15debd1a1b97e41\)/,
  );
  expect((await storedCounts(page)).promptFiles).toBe(0);

  // A read on a model engine with nothing chosen: this app's wording, and the run says why.
  await page.getByRole('combobox', { name: 'Engine' }).selectOption({ label: 'OpenAI-compatible server' });
  await page.getByLabel('Base URL', { exact: true }).fill(SERVER);
  await page.getByLabel('API key', { exact: true }).fill('sk-e2e-kept-local');
  await page.getByRole('button', { name: 'Connect' }).click();
  await expect(page.getByRole('status').filter({ hasText: 'Connected' })).toBeVisible();
  await expect(settings.getByText("This app's wording, until MemAgent (paper)'s prompt file is fetched")).toBeVisible();
  await page.getByLabel('Document').setInputFiles({ name: 'harbour.txt', mimeType: 'text/plain', buffer: BOOK });
  await page.getByText(/harbour\.txt — .*tokens/).waitFor();
  await page.getByLabel('Question').fill(PLANTED.question);
  await page.getByRole('button', { name: 'Read' }).click();
  await expect(page.getByRole('region', { name: 'Answer' })).toContainText(PLANTED.code);
  await page.getByText('Run settings').click();
  const runSettings = page.getByRole('group').filter({ hasText: 'Run settings' });
  const prompts = runSettings.getByRole('definition').filter({ hasText: "This app's wording" });
  await expect(prompts).toContainText(
    `MemAgent (paper) was not used: its prompt file is not in this browser yet. ${EMPTY_MIRROR}/taskutils/memory_eval/utils/recurrent.py could not be fetched (HTTP 404).`,
  );

  // Chosen by name, MemAgent (paper) is never swapped for another set: the read is refused with how to get the file.
  await settings.getByRole('combobox', { name: 'Prompt set' }).selectOption({ label: 'MemAgent (paper)' });
  await page.getByRole('button', { name: 'Read' }).click();
  const refused = page.getByRole('alert').filter({ hasText: 'MemAgent (paper) needs its prompt file' });
  // It points to the button where it is, and its addresses wrap inside a narrow column.
  await expect(refused).toContainText('press "Fetch prompt files" under "Sampling and prompts" on the Read form');
  await expect(refused).toContainText('"Import prompt file"');
  await page.setViewportSize({ width: 360, height: 800 });
  expect(await refused.evaluate((el) => el.scrollWidth <= el.clientWidth)).toBe(true);
  await page.setViewportSize({ width: 1280, height: 800 });
  // The choice and the mirror are remembered.
  await page.reload();
  await openPrompts(page);
  await expect(page.getByRole('combobox', { name: 'Prompt set' })).toHaveValue('memagent');
  await expect(page.getByLabel('Prompt file mirror')).toHaveValue(EMPTY_MIRROR);

  // The extractive engine reads no instructions: MemAgent (boxed) chosen, it reads without the file.
  await expect(page.getByLabel('Document')).toHaveAccessibleDescription('harbour.txt');
  await expect(page.getByLabel('Question')).toHaveValue(PLANTED.question);
  await page.getByRole('combobox', { name: 'Engine' }).selectOption({ label: 'Extractive (no model)' });
  await settings.getByRole('combobox', { name: 'Prompt set' }).selectOption({ label: 'MemAgent (boxed)' });
  await expect(settings.getByText("The extractive engine reads no instructions: this app's wording.")).toBeVisible();
  await page.getByRole('button', { name: 'Read' }).click();
  await expect(page.getByRole('region', { name: 'Answer' })).toContainText(PLANTED.code);
  await expect(page.getByRole('alert')).toHaveCount(0);
});
