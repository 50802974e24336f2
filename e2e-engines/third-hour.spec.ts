import { expect, test } from './fixtures';
import { fileFor, openPlace, stored, tickOnly } from './app';
import { expectAttribute, expectCount, expectText } from './screen';
import { stepHold } from '../e2e/helpers';
import { HOLD_CHANNEL } from '../src/agent/events';
import { prose } from '../test/fixtures/documents';
import { startOpenAIServer } from '../test/support/openai-server';

const FACTS = [
  { sentence: 'The warden of Gull Rock is Orrin Vale.', question: 'Who is the warden of Gull Rock?', answer: 'Orrin Vale' },
  { sentence: 'The ferry to Carrow Island leaves from pier 17.', question: 'From which pier does the ferry to Carrow Island leave?', answer: 'pier 17' },
] as const;

/**
 * A person's third hour (e2e/third-hour.spec.ts) in this engine: two questions over two books paused and resumed as
 * one, with their steps held by the test; a second read in other chunk sizes, found by the Library's search and
 * compared with the first place by place; an evaluation paused with its answer held at a server, still paused
 * after a reload, then resumed to the end.
 */
test('a third hour: a read of two questions over two books paused and resumed as one, the Library searched, two chunk sizes compared, an evaluation paused across a reload', async ({
  tab,
  ui: page,
  baseURL,
}, info) => {
  await tab.goto('/');
  await expect.poll(() => page.getByRole('combobox', { name: 'Engine' }).inputValue()).toBe('extractive');
  await page
    .getByLabel('Document')
    .upload([
      fileFor(info.outputPath('harbour.txt'), `${prose(1, 40)}\n\n${FACTS[0].sentence}\n\n${prose(2, 40)}`),
      fileFor(info.outputPath('ferries.txt'), `${prose(3, 40)}\n\n${FACTS[1].sentence}\n\n${prose(4, 40)}`),
    ]);
  await page.getByText(/^2 books — .* tokens: read in this order/).waitFor(90_000);
  await page.getByLabel('Question', { exact: true }).fill(FACTS[0].question);
  await page.getByRole('button', { name: 'Add a question' }).click();
  await page.getByLabel('Question 2', { exact: true }).fill(FACTS[1].question);
  await page.getByLabel('Chunk size (tokens)').fill('300');

  // Both questions' third steps are held, so the read is midway when it is paused, whatever this machine's speed.
  await tab.evaluate(stepHold.hold, { channel: HOLD_CHANNEL, index: 2 });
  await page.getByRole('button', { name: 'Read', exact: true }).click();
  await expect.poll(() => tab.evaluate(stepHold.runs, 2)).toBe(2);
  const read = page.getByRole('region', { name: 'Questions of this read' });
  await read.getByRole('button', { name: 'Pause all questions' }).click();
  await read.getByRole('button', { name: 'Resume all questions' }).waitFor();
  for (const fact of FACTS) await expectText(read.getByRole('article', { name: fact.question }), 'Paused');
  expect((await stored.records<{ status: string }>(tab, 'runs')).map((r) => r.status)).toEqual(['paused', 'paused']);
  await read.getByRole('button', { name: 'Resume all questions' }).click();
  await read.getByRole('button', { name: 'Pause all questions' }).waitFor();
  await tab.evaluate(stepHold.release, HOLD_CHANNEL);
  for (const fact of FACTS) await expectText(read.getByRole('article', { name: fact.question }), fact.answer, 90_000);
  await expectAttribute(read.getByRole('progressbar', { name: 'Book read for all questions' }), 'aria-valuetext', /· 0 of 2 questions still writing$/);

  // The first question again, in chunks half the size and a memory off the old step of 64.
  await page.getByRole('button', { name: 'Remove question 2' }).click();
  await page.getByLabel('Chunk size (tokens)').fill('150');
  await page.getByLabel('Memory size (tokens)').fill('1000');
  await page.getByRole('button', { name: 'Read', exact: true }).click();
  await expectText(page.getByRole('region', { name: 'Answer' }), FACTS[0].answer, 90_000);

  await openPlace(page, 'Library');
  await page.getByLabel('Search runs').fill('carrow ferries.txt');
  await page.getByText('1 of 3 runs match.').waitFor();
  const runs = page.getByRole('navigation', { name: 'Runs' });
  await expectCount(runs.getByRole('button', { name: FACTS[0].question }), 0);
  await page.getByLabel('Search runs').fill('warden harbour.txt');
  await page.getByText('2 of 3 runs match.').waitFor();
  await runs.getByRole('button', { name: /Gull Rock\?.*150-token chunks/ }).click();
  const slider = page.getByRole('slider', { name: 'Revision' });
  await slider.click();
  await tab.press('End');
  const compareWith = page.getByRole('combobox', { name: 'Compare with' });
  await compareWith.selectOption(await compareWith.getByRole('option', { name: /^Who is the warden of Gull Rock\? .*chunk 300 \// }).text());
  const comparison = page.getByRole('region', { name: 'Comparison' });
  await expectText(comparison, /this is its memory after its chunk \d+, the one that read where chunk \d+ of this run starts/);
  const [, theirs, ours] = /its chunk (\d+), the one that read where chunk (\d+)/.exec(await comparison.text())!;
  expect(Number(theirs)).toBeLessThan(Number(ours));
  await expectText(comparison, FACTS[0].answer);

  // An evaluation with its first answer held at the server: paused, still paused after a reload, resumed to the end.
  const server = await startOpenAIServer({ allowedOrigin: new URL(baseURL!).origin });
  try {
    const held = server.hold((r) => r.final);
    await openPlace(page, 'Evaluate');
    await page.getByRole('combobox', { name: 'Engine' }).selectOption('OpenAI-compatible server');
    await page.getByLabel('Base URL', { exact: true }).fill(server.url);
    await page.getByRole('button', { name: 'Connect' }).click();
    await page.getByText(/^Connected: memagent-test/).waitFor();
    await tickOnly(page, 'Tasks', ['Needle in an essay: a number']);
    await tickOnly(page, 'Lengths (tokens)', ['8K']);
    await page.getByLabel('Samples per cell').fill('2');
    await page.getByRole('button', { name: 'Start evaluation' }).click();
    await held;
    await page.getByRole('button', { name: 'Pause', exact: true }).click();
    await page.getByRole('button', { name: 'Resume', exact: true }).waitFor();
    await tab.reload();
    await page.getByText(/^Paused · 0 of 2 samples/).waitFor();
    await expectText(page.getByRole('navigation', { name: 'Evaluations' }).getByRole('button'), '0/2 · paused');
    await page.getByRole('button', { name: 'Resume', exact: true }).click();
    server.release();
    await page.getByText(/^Done · 2 of 2 samples/).waitFor(60_000);
  } finally {
    await server.stop();
  }
});
