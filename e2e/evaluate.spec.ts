import { readFileSync } from 'node:fs';
import { expect, type Page, test } from '@playwright/test';
import { scorePrediction } from '../src/eval/paper-score';
import { LINE_ITEMS, LIST_ITEMS } from '../test/fixtures/hotpotqa';
import type { HeldRequest } from '../test/support/openai-server';
import { connectServer, ownOpenAIServer, storedRecords, tickOnly } from './helpers';

/** Starts a sweep with the extractive engine, or through the OpenAI-compatible server at `serverUrl`. */
async function startSweep(page: Page, tasks: readonly string[], lengths: readonly string[], samples: number, serverUrl?: string): Promise<void> {
  await page.goto('/');
  await page.getByRole('link', { name: 'Evaluate' }).click();
  await expect(page.getByRole('heading', { level: 1, name: 'Evaluate' })).toBeVisible();
  await expect(page.getByRole('combobox', { name: 'Engine' })).toHaveValue('extractive');
  if (serverUrl) await connectServer(page, serverUrl);
  await tickOnly(page, 'Tasks', tasks);
  await tickOnly(page, 'Lengths (tokens)', lengths);
  await page.getByLabel('Samples per cell').fill(String(samples));
  await page.getByRole('button', { name: 'Start evaluation' }).click();
}

test('a small sweep with the extractive engine fills the table, the chart and the exports', async ({ page }) => {
  await startSweep(page, ['Needle in noise: a number', 'Variable tracking'], ['8K'], 2);
  const progress = page.getByRole('progressbar', { name: 'Evaluation progress' });
  await expect(progress).toHaveAttribute('aria-valuemax', '4');
  await expect(progress).toHaveAttribute('aria-valuenow', '4');
  await expect(page.getByText(/^Done · 4 of 4 samples/)).toBeVisible();

  const table = page.getByRole('table', { name: 'Results' });
  const needle = table.getByRole('row', { name: /niah_single_1/ });
  await expect(needle).toContainText('8K');
  await expect(needle).toContainText('2/2');
  await expect(needle).toContainText('100.0 %');
  // The heuristic finds the first assignment of the chain and none of the hops: 1 of 5 names.
  await expect(table.getByRole('row', { name: /vt/ })).toContainText('20.0 %');
  await expect(page.getByRole('img', { name: 'Accuracy against document length (log scale)' })).toBeVisible();

  const [csv] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Export CSV' }).click()]);
  const lines = readFileSync(await csv.path(), 'utf8')
    .trim()
    .split('\n');
  expect(lines[0]).toBe('task,length,samples,scored,skipped,accuracy,exact_match,f1,mean_ms_per_chunk,tokens_per_second');
  expect(lines[1]).toMatch(/^niah_single_1,8192,2,2,0,1,,,/);
  expect(lines[2]).toMatch(/^vt,8192,2,2,0,0\.2,,,/);

  const [json] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Export JSON' }).click()]);
  const report = JSON.parse(readFileSync(await json.path(), 'utf8'));
  expect(report.engine).toBe('extractive');
  expect(report.haystack).toBe('generated essay');
  expect(report.samples).toHaveLength(4);
  expect(report.samples.map((s: { ordinal: number }) => s.ordinal)).toEqual([0, 1, 2, 3]);
  // Every figure as computed: the CSV says exactly what the JSON says; only the table on the page rounds.
  const columns = lines[0]!.split(',');
  const keys = { accuracy: 'accuracy', mean_ms_per_chunk: 'meanChunkMs', tokens_per_second: 'tokensPerSecond' } as const;
  report.cells.forEach((cell: Record<string, number | null>, i: number) => {
    const values = lines[i + 1]!.split(',');
    for (const [column, key] of Object.entries(keys)) expect(values[columns.indexOf(column)]).toBe(cell[key] === null ? '' : String(cell[key]));
  });

  // A finished sweep can be deleted, asked first in place; its samples go with it.
  await page.getByRole('button', { name: 'Delete evaluation' }).click();
  const confirm = page.getByRole('group', { name: 'Confirm delete evaluation' });
  await expect(confirm).toContainText('Delete this evaluation and its 4 finished samples?');
  await expect(confirm.getByRole('button', { name: 'Keep evaluation' })).toBeFocused();
  await confirm.getByRole('button', { name: 'Yes, delete evaluation' }).click();
  await expect(page.getByRole('navigation', { name: 'Evaluations' })).toHaveCount(0);
  await expect(page.getByRole('region', { name: 'Evaluation' })).toHaveCount(0);
  expect(await storedSamples(page)).toEqual([]);

  // The same sample read by MemAgent and by InfMem (the extractive engine's stand-ins), the two compared in one table.
  await tickOnly(page, 'Tasks', ['Needle in noise: a number']);
  await page.getByLabel('Samples per cell').fill('1');
  await page.getByLabel('Reading method').selectOption({ label: 'Both: MemAgent and InfMem on the same samples' });
  await page.getByRole('button', { name: 'Start evaluation' }).click();
  await expect(page.getByText(/^Done · 2 of 2 samples/)).toBeVisible();
  const methods = page.getByRole('table', { name: 'Methods compared on the same samples' });
  await expect(methods.getByRole('row', { name: /^MemAgent 8K 1 100\.0 %/ })).toBeVisible();
  await expect(methods.getByRole('row', { name: /^InfMem 8K 1 / })).toBeVisible();
});

/**
 * Holds the answer request of sample `ordinal` and every request after it at the server: samples before it are
 * stored, that one is in hand, and the sweep waits there however fast this machine reads.
 */
function fromAnswerOf(ordinal: number): (request: HeldRequest) => boolean {
  let answers = 0;
  return (request) => (answers += request.final ? 1 : 0) > ordinal;
}

test('a sweep resumes after a reload from its next unfinished sample', async ({ page }) => {
  const server = await ownOpenAIServer();
  try {
    const held = server.hold(fromAnswerOf(1));
    await startSweep(page, ['Needle in an essay: a number'], ['8K', '16K'], 3, server.url);
    const progress = page.getByRole('progressbar', { name: 'Evaluation progress' });
    await expect(progress).toHaveAttribute('aria-valuemax', '6');
    await held;
    await expect(progress).toHaveAttribute('aria-valuenow', '1');
    // The list names the sweep by what it reads, and counts what storage holds.
    const entry = page.getByRole('navigation', { name: 'Evaluations' }).getByRole('button');
    await expect(entry).toContainText('niah_single_2 × 8K, 16K × 3 samples');
    await expect(entry).toContainText('1/6 · running');
    const reloadedAt = await page.evaluate(() => Date.now());
    await page.reload();

    // A pause is stored before the page says paused: a reload right after finds it paused.
    const after = page.getByRole('progressbar', { name: 'Evaluation progress' });
    await expect(after).toHaveAttribute('aria-valuenow', '1');
    await page.getByRole('button', { name: 'Pause' }).click();
    await expect(page.getByRole('button', { name: 'Resume' })).toBeVisible();
    await page.reload();
    await expect(page.getByText(/^Paused · 1 of 6 samples/)).toBeVisible();
    await expect(page.getByRole('navigation', { name: 'Evaluations' }).getByRole('button')).toContainText('1/6 · paused');
    await page.getByRole('button', { name: 'Resume' }).click();
    server.release();

    // What was finished is still there, and the sweep carries on to the end.
    await expect(after).toHaveAttribute('aria-valuenow', '6');
    await expect(page.getByText(/^Done · 6 of 6 samples/)).toBeVisible();
    const rows = page.getByRole('table', { name: 'Results' }).getByRole('row', { name: /niah_single_2/ });
    await expect(rows).toHaveCount(2);
    for (const row of await rows.all()) await expect(row).toContainText('3/3');

    // Each sample was stored once: the first before the reload, the one in hand and the rest after it.
    const stored = await storedSamples(page);
    expect(stored.map((s) => s.ordinal)).toEqual([0, 1, 2, 3, 4, 5]);
    expect(stored.filter((s) => s.committedAt < reloadedAt).map((s) => s.ordinal)).toEqual([0]);
  } finally {
    await server.stop();
  }
});

test('a sweep whose tab closes is carried on by another open tab, from its next unfinished sample', async ({ context }) => {
  const server = await ownOpenAIServer();
  try {
    const held = server.hold(fromAnswerOf(1));
    // The second tab is open before the sweep starts: it hears of the sweep and stands by for its lock.
    const second = await context.newPage();
    await second.goto('/');
    const first = await context.newPage();
    await startSweep(first, ['Needle in an essay: a number'], ['8K', '16K'], 2, server.url);
    const progress = first.getByRole('progressbar', { name: 'Evaluation progress' });
    await expect(progress).toHaveAttribute('aria-valuemax', '4');
    await held;
    await expect(progress).toHaveAttribute('aria-valuenow', '1');

    await second.getByRole('link', { name: 'Evaluate' }).click();
    const followed = second.getByRole('progressbar', { name: 'Evaluation progress' });
    await expect(followed).toHaveAttribute('aria-valuemax', '4');
    await expect(followed).toHaveAttribute('aria-valuenow', '1');
    const closedAt = await second.evaluate(() => Date.now());
    await first.close({ runBeforeUnload: false });
    server.release();

    await expect(followed).toHaveAttribute('aria-valuenow', '4');
    await expect(second.getByText(/^Done · 4 of 4 samples/)).toBeVisible();
    const stored = await storedSamples(second);
    expect(stored.map((s) => s.ordinal)).toEqual([0, 1, 2, 3]);
    // The closed tab stored the first sample; the sample it had in hand and the rest were read by the other tab.
    expect(stored.filter((s) => s.committedAt < closedAt).map((s) => s.ordinal)).toEqual([0]);
  } finally {
    await server.stop();
  }
});

/** Every stored evaluation sample's position and commit time. */
async function storedSamples(page: Page): Promise<{ ordinal: number; committedAt: number }[]> {
  const samples = await storedRecords<{ ordinal: number; committedAt: number }>(page, 'evaluationSamples');
  return samples.map(({ ordinal, committedAt }) => ({ ordinal, committedAt }));
}

test("RULER-HotpotQA dataset files are read by the paper's method, beside the paper's figures", async ({ page }) => {
  await page.goto('/');
  await page.getByRole('link', { name: 'Evaluate' }).click();
  await expect(page.getByRole('combobox', { name: 'Engine' })).toHaveValue('extractive');
  await page.getByLabel('Dataset file').setInputFiles([
    { name: 'eval_50.json', mimeType: 'application/json', buffer: Buffer.from(JSON.stringify(LIST_ITEMS)) },
    { name: 'eval_200.jsonl', mimeType: 'application/json', buffer: Buffer.from(LINE_ITEMS.map((i) => JSON.stringify(i)).join('\n')) },
  ]);
  // The generated tasks give way to the method, which follows the prompt set: recurrent for MemAgent (paper),
  // recurrent-boxed for the boxed set and for this app's wording (its final template asks for \boxed{}), the extractive engine's.
  await expect(page.getByRole('group', { name: 'Tasks' })).toHaveCount(0);
  const promptSet = page.getByRole('combobox', { name: 'Prompt set' });
  await expect(promptSet).toHaveValue('auto');
  await expect(page.getByRole('combobox', { name: 'Method', exact: true })).toHaveValue('recurrent-boxed');
  await promptSet.selectOption({ label: 'MemAgent (paper)' });
  await expect(page.getByRole('combobox', { name: 'Method', exact: true })).toHaveValue('recurrent');
  await promptSet.selectOption('auto');
  await expect(page.getByRole('combobox', { name: 'Method', exact: true })).toHaveValue('recurrent-boxed');
  // The Read page's own Chunk size stays in the document, hidden: the visible one is the Evaluate form's.
  await page.getByRole('spinbutton', { name: 'Chunk size (tokens)' }).fill('200');
  await page.getByRole('button', { name: 'Start evaluation' }).click();

  await expect(page.getByText(/^Done · 4 of 4 samples/)).toBeVisible();
  await expect(page.getByRole('region', { name: 'Evaluation' })).toContainText('chunks of 200 tokens, exact token slices, as the paper cuts');
  await expect(page.getByRole('region', { name: 'Evaluation' })).toContainText("prompts: This app's wording");
  const table = page.getByRole('table', { name: 'Results' });
  const first = table.getByRole('row', { name: /eval_50\.json/ });
  for (const cell of ['50', '7K', '2/2', '100.00 %', '82.0 %', '83.6 %']) await expect(first).toContainText(cell);
  await expect(table.getByRole('row', { name: /eval_200\.jsonl/ })).toContainText('78.9 %');

  const [json] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Export JSON' }).click()]);
  const report = JSON.parse(readFileSync(await json.path(), 'utf8'));
  expect(report).toMatchObject({ method: 'recurrent-boxed', prompts: { set: 'app', sha256: null } });
  expect(report.datasets.map((d: { file: string; num_docs: number; samples: unknown[] }) => [d.file, d.num_docs, d.samples.length])).toEqual([
    ['eval_50.json', 50, 2],
    ['eval_200.jsonl', 200, 2],
  ]);
  expect(report.datasets[0].samples[1]).toMatchObject({ index: 1, answers: ['copper bells', 'bells'], sub_em: 1 });
  // Each sample's f1 exactly as the paper's scorer computes it, not rounded to the two decimals its record keeps.
  const samples = report.datasets.flatMap((d: { samples: { prediction: string | null; answers: string[]; f1: number }[] }) => d.samples);
  for (const s of samples) expect(s.f1).toBe(scorePrediction(s.prediction, s.answers).f1);
  expect(samples.some((s: { f1: number }) => Math.abs(s.f1 * 100 - Math.round(s.f1 * 100)) > 1e-9)).toBe(true);

  // The same files read by InfMem (the extractive engine's stand-ins), scored as its ruler_hqa.py scores them.
  await page.getByLabel('Reading method').selectOption({ label: 'InfMem' });
  await expect(page.getByRole('checkbox', { name: 'InfMem thinking' })).toBeChecked();
  await expect(page.getByRole('combobox', { name: 'Prompt set' })).toHaveCount(0);
  await page.getByRole('button', { name: 'Start evaluation' }).click();
  const view = page.getByRole('region', { name: 'Evaluation' });
  await expect(view.getByRole('heading', { level: 2 })).toHaveText(/ · InfMem$/);
  await expect(page.getByText(/^Done · 4 of 4 samples/)).toBeVisible();
  await expect(view).toContainText('InfMem: stop after 3 votes in a row, thinking on, temperature 0, top p 1');
  const byInfmem = page.getByRole('table', { name: 'Results by InfMem' });
  for (const file of ['eval_50.json', 'eval_200.jsonl'])
    await expect(byInfmem.getByRole('row', { name: new RegExp(file.replace('.', '\\.')) })).toContainText('2/2');
  await expect(page.getByRole('table', { name: 'Methods compared on the same samples' }).getByRole('row', { name: /^InfMem eval_50\.json 2 / })).toBeVisible();
  const [infmemJson] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Export JSON' }).click()]);
  const infmemReport = JSON.parse(readFileSync(await infmemJson.path(), 'utf8'));
  expect(infmemReport).toMatchObject({ method: 'infmem', earlyStop: 3, thinking: true });
  expect(infmemReport.datasets.map((d: { samples: unknown[] }) => d.samples.length)).toEqual([2, 2]);
});
