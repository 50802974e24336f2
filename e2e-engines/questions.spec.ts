import { expect, test } from './fixtures';
import { fileFor, openPlace } from './app';
import { expectAttribute, expectCount, expectText } from './screen';
import { prose } from '../test/fixtures/documents';

const FACTS = [
  { sentence: 'The warden of Gull Rock is Orrin Vale.', question: 'Who is the warden of Gull Rock?', answer: 'Orrin Vale' },
  { sentence: 'The ferry to Carrow Island leaves from pier 17.', question: 'From which pier does the ferry to Carrow Island leave?', answer: 'pier 17' },
];

/**
 * Two questions asked with one press of Read: the book is read once for
 * both, each question's answer is shown under it on the read's page, kept
 * across a reload, and the Library lists the read with its questions.
 */
test('two questions asked together are read in one read, each answered under its question, through a reload', async ({ tab, ui: page }, info) => {
  const book = `${prose(1, 50)}\n\n${FACTS[0]!.sentence}\n\n${prose(2, 50)}\n\n${FACTS[1]!.sentence}\n\n${prose(3, 50)}`;
  await tab.goto('/');
  await expect.poll(() => page.getByRole('combobox', { name: 'Engine' }).inputValue()).toBe('extractive');
  await page.getByLabel('Document').upload(fileFor(info.outputPath('harbour.txt'), book));
  await page.getByText('harbour.txt — ').waitFor();
  await page.getByLabel('Question', { exact: true }).fill(FACTS[0]!.question);
  await page.getByRole('button', { name: 'Add a question' }).click();
  await page.getByLabel('Question 2', { exact: true }).fill(FACTS[1]!.question);
  await page.getByLabel('Chunk size (tokens)').fill('300');
  await page.getByRole('button', { name: 'Read', exact: true }).click();

  const read = page.getByRole('region', { name: 'Questions of this read' });
  for (const fact of FACTS) await expectText(read.getByRole('article', { name: fact.question }), fact.answer, 90_000);
  await expectAttribute(read.getByRole('progressbar', { name: 'Book read for all questions' }), 'aria-valuetext', /· 0 of 2 questions still writing$/);

  await tab.reload();
  for (const fact of FACTS) await expectText(read.getByRole('article', { name: fact.question }), fact.answer);
  await openPlace(page, 'Library');
  const group = page.getByRole('navigation', { name: 'Runs' }).getByRole('group', { name: 'One read of harbour.txt: 2 questions' });
  for (const fact of FACTS) await expectCount(group.getByRole('button', { name: fact.question }), 1);
});
