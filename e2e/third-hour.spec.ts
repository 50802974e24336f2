import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from '@playwright/test';
import { prose } from '../test/fixtures/documents';
import { startCli } from '../test/support/cli';
import { connectServer, heldAt, heldRuns, holdSteps, ownOpenAIServer, releaseSteps, storedRecords, tickOnly } from './helpers';
import { openPlace } from './places';

/*
 * A person's third hour with the app, replayed as one journey: several questions over two books read as one
 * read, paused and resumed as one; the Library searched for it; a second read in other chunk sizes compared
 * with it place by place; an evaluation paused across a reload; and in the command line, Ctrl-C and --resume.
 * Each pause is held where a race is possible: a held step, a held server reply, never a wait for time.
 */

const FACTS = [
  { sentence: 'The warden of Gull Rock is Orrin Vale.', question: 'Who is the warden of Gull Rock?', answer: 'Orrin Vale' },
  { sentence: 'The ferry to Carrow Island leaves from pier 17.', question: 'From which pier does the ferry to Carrow Island leave?', answer: 'pier 17' },
] as const;

/** harbour.txt holds the first fact, ferries.txt the second. */
const BOOKS = [
  { name: 'harbour.txt', mimeType: 'text/plain', buffer: Buffer.from(`${prose(1, 40)}\n\n${FACTS[0].sentence}\n\n${prose(2, 40)}`) },
  { name: 'ferries.txt', mimeType: 'text/plain', buffer: Buffer.from(`${prose(3, 40)}\n\n${FACTS[1].sentence}\n\n${prose(4, 40)}`) },
];

test('a third hour in the app: two questions over two books paused and resumed as one, the Library searched, two chunk sizes compared, an evaluation paused across a reload', async ({
  page,
}) => {
  await page.goto('/');
  await expect(page.getByRole('combobox', { name: 'Engine' })).toHaveValue('extractive');
  await page.getByLabel('Document').setInputFiles(BOOKS);
  await expect(page.getByText(/^2 books — .* tokens: read in this order/)).toBeVisible();
  await page.getByLabel('Question', { exact: true }).fill(FACTS[0].question);
  await page.getByRole('button', { name: 'Add a question' }).click();
  await page.getByLabel('Question 2', { exact: true }).fill(FACTS[1].question);
  await page.getByRole('spinbutton', { name: 'Chunk size (tokens)' }).fill('300');

  // Both questions' third steps are held: the read is midway, whatever this machine's speed.
  await holdSteps(page, 2);
  await page.getByRole('button', { name: 'Read', exact: true }).click();
  await heldAt(page, 2);
  await expect.poll(() => heldRuns(page, 2)).toBe(2);
  const read = page.getByRole('region', { name: 'Questions of this read' });
  await expect(read.getByRole('progressbar', { name: 'Book read for all questions' })).toHaveAttribute('aria-valuenow', '2');

  // Pause the read as one: every question paused, in the page and in storage; then resume it as one.
  await read.getByRole('button', { name: 'Pause all questions' }).click();
  await expect(read.getByRole('button', { name: 'Resume all questions' })).toBeVisible();
  for (const fact of FACTS) await expect(read.getByRole('article', { name: fact.question })).toContainText('Paused');
  expect((await storedRecords<{ status: string }>(page, 'runs')).map((r) => r.status)).toEqual(['paused', 'paused']);
  await read.getByRole('button', { name: 'Resume all questions' }).click();
  await expect(read.getByRole('button', { name: 'Pause all questions' })).toBeVisible();
  for (const fact of FACTS) await expect(read.getByRole('article', { name: fact.question })).toContainText('Reading…');
  await releaseSteps(page);
  for (const fact of FACTS) await expect(read.getByRole('article', { name: fact.question }).getByText(fact.answer).first()).toBeVisible({ timeout: 60_000 });
  await expect(read.getByRole('progressbar', { name: 'Book read for all questions' })).toHaveAttribute('aria-valuetext', /· 0 of 2 questions still writing$/);
  const firstRead = (await storedRecords<{ id: string }>(page, 'runs')).map((r) => r.id);

  // A second read of the first question over the same books, in smaller chunks and with settings off the fields'
  // old steps of 100, 64 and 0.05, which the browser refused without a word: each one taken as typed.
  await page.getByRole('button', { name: 'Remove question 2' }).click();
  await page.getByLabel('Question', { exact: true }).fill(FACTS[0].question);
  await page.getByRole('spinbutton', { name: 'Chunk size (tokens)' }).fill('150');
  await page.getByRole('spinbutton', { name: 'Memory size (tokens)' }).fill('1000');
  await page.getByText('Sampling and prompts').click();
  await page.getByRole('spinbutton', { name: 'Temperature' }).fill('0.72');
  await page.getByRole('spinbutton', { name: 'Top p' }).fill('0.92');
  await page.getByRole('button', { name: 'Read', exact: true }).click();
  await expect(page.getByRole('region', { name: 'Answer' }).getByText(FACTS[0].answer).first()).toBeVisible({ timeout: 60_000 });
  const second = (await storedRecords<{ id: string; settings: Record<string, number> }>(page, 'runs')).filter((r) => !firstRead.includes(r.id));
  expect(second).toHaveLength(1);
  expect(second[0]!.settings).toMatchObject({ chunkTokens: 150, memoryTokens: 1000, temperature: 0.72, topP: 0.92 });

  // The Library finds the runs by question and book.
  await openPlace(page, 'Library');
  const runs = page.getByRole('navigation', { name: 'Runs' });
  const search = page.getByLabel('Search runs');
  await search.fill('carrow ferries.txt');
  await expect(page.getByText('1 of 3 runs match.')).toBeVisible();
  await expect(runs.getByRole('button', { name: FACTS[1].question })).toBeVisible();
  await expect(runs.getByRole('button', { name: FACTS[0].question })).toHaveCount(0);
  await search.fill('warden harbour.txt');
  await expect(page.getByText('2 of 3 runs match.')).toBeVisible();

  // The smaller chunks' run, compared at its last chunk with the read in larger chunks: lined up by place in the books.
  await runs.getByRole('button', { name: new RegExp(`${FACTS[0].question.replace('?', '\\?')}.*150-token chunks`) }).click();
  await page.getByRole('slider', { name: 'Revision' }).press('End');
  const compareWith = page.getByRole('combobox', { name: 'Compare with' });
  const larger = (await compareWith.getByRole('option', { name: new RegExp(`^${FACTS[0].question.replace('?', '\\?')} .*chunk 300 /`) }).textContent())!;
  await compareWith.selectOption({ label: larger });
  const comparison = page.getByRole('region', { name: 'Comparison' });
  await expect(comparison).toContainText(/this is its memory after its chunk (\d+), the one that read where chunk (\d+) of this run starts/);
  const [, theirs, ours] = /its chunk (\d+), the one that read where chunk (\d+)/.exec((await comparison.textContent())!)!;
  // Twice the chunk size: the same place falls in a chunk about half as far along.
  expect(Number(theirs)).toBeLessThan(Number(ours));
  await expect(comparison.getByRole('heading')).toContainText(`memory after chunk ${theirs}`);
  await expect(comparison.locator('pre')).toContainText(FACTS[0].answer);

  // An evaluation paused with a sample in hand (its answer held at a server), still paused after a reload.
  const server = await ownOpenAIServer();
  try {
    const held = server.hold((r) => r.final);
    await openPlace(page, 'Evaluate');
    await connectServer(page, server.url);
    await tickOnly(page, 'Tasks', ['Needle in an essay: a number']);
    await tickOnly(page, 'Lengths (tokens)', ['8K']);
    await page.getByLabel('Samples per cell').fill('2');
    await page.getByRole('button', { name: 'Start evaluation' }).click();
    await held;
    await page.getByRole('button', { name: 'Pause' }).click();
    await expect(page.getByRole('button', { name: 'Resume' })).toBeVisible();
    await page.reload();
    await expect(page.getByText(/^Paused · 0 of 2 samples/)).toBeVisible();
    await expect(page.getByRole('navigation', { name: 'Evaluations' }).getByRole('button')).toContainText('0/2 · paused');
    await page.getByRole('button', { name: 'Resume' }).click();
    server.release();
    await expect(page.getByText(/^Done · 2 of 2 samples/)).toBeVisible();
  } finally {
    await server.stop();
  }
});

test('a third hour in the command line: Ctrl-C stops a read with exit code 130, and --resume finishes it, saying what it read', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'memagent-third-hour-'));
  try {
    const out = join(dir, 'frankenstein.memagent.jsonl');
    // Frankenstein in 100-token chunks: over 1,000 steps, far from the end when the first one is out.
    const read = ['read', 'data/haystack/frankenstein.txt', '--engine', 'extractive', '--chunk', '100', '--memory', '256', '--progress', 'lines', '--out', out];
    const first = startCli([...read, '-q', 'Who is Elizabeth?'], { via: 'bin' });
    await first.waitForStderr(/^chunk 1\/[\d,]+ /m);
    first.interrupt();
    const stopped = await first.outcome;
    expect(stopped.code).toBe(130);
    const [, saved, total] =
      /Stopped\. ([\d,]+) of ([\d,]+) chunks are saved in .*; run the same command with --resume to continue\./.exec(stopped.stderr) ?? [];
    expect(saved).toBeDefined();

    const resumed = await startCli([...read, '--resume'], { via: 'bin' }).outcome;
    expect(resumed.code).toBe(0);
    const count = (n: string) => Number(n.replace(/,/g, ''));
    const rest = (count(total!) - count(saved!)).toLocaleString('en-US');
    expect(resumed.stderr).toMatch(new RegExp(`^Read the last ${rest} of ${total} chunks \\(${saved} were read before\\) in [\\d.]+ s`, 'm'));
    expect(resumed.stdout).toContain('Elizabeth');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
