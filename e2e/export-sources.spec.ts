import { readFileSync } from 'node:fs';
import { expect, test } from '@playwright/test';
import { PLANTED, plantedBook, readBook } from './helpers';
import { openPlace } from './places';

interface ExportedCitation {
  revision: number;
  keptUntil: number;
  sentence?: { start: number; end: number; text: string };
  place: string;
}

test('the extractive answer says it was picked, not written; both exports carry its sources, and an imported run shows them again', async ({ page }, info) => {
  await page.goto('/');
  await readBook(page, plantedBook(0.5));
  const max = Number(await page.getByRole('progressbar', { name: 'Reading progress' }).getAttribute('aria-valuemax'));
  const answer = page.getByRole('region', { name: 'Answer' });

  // Sentences picked from the memory are labelled so, beside the engines that would write an answer.
  const note = answer.getByRole('note');
  await expect(note).toContainText('Not written by a model: these are the sentences of the final memory most related to the question');
  await expect(note).toContainText('read with WebLLM, llama.cpp or an OpenAI-compatible server');

  // The planted sentence is a source, as the page shows it: quoted, with its place and revisions.
  const sources = answer.getByRole('region', { name: 'Sources' });
  const planted = sources.getByRole('figure').filter({ hasText: PLANTED.sentence });
  await expect(planted).toHaveCount(1);
  const shown = (await planted.textContent())!;

  // A follow-up answer of the extractive engine is labelled too, and has sources of its own.
  const box = page.getByRole('textbox', { name: 'Ask this memory' });
  await box.fill('Which code opens the Marlowe archive vault?');
  await box.press('Enter');
  const followUp = page.getByRole('list', { name: 'Follow-up answers' }).getByRole('listitem');
  await expect(followUp).toContainText('sentences of the memory picked without a model, not an answer written by one');
  await expect(followUp.getByRole('region', { name: 'Sources' }).getByRole('figure').filter({ hasText: PLANTED.sentence })).toHaveCount(1);

  const [json] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Export JSON' }).click()]);
  const jsonPath = info.outputPath('run.json');
  await json.saveAs(jsonPath);
  const data = JSON.parse(readFileSync(jsonPath, 'utf8')) as { sources?: { answer: number; citations: ExportedCitation[] }[] };
  // The run's own answer (-1) and the follow-up answer (0), each with its sources.
  expect(data.sources?.map((s) => s.answer).sort((a, b) => a - b)).toEqual([-1, 0]);
  const own = data.sources?.find((s) => s.answer === -1);
  expect(own, 'the export holds the sources of the answer').toBeDefined();
  const cited = own!.citations.find((c) => c.sentence?.text === PLANTED.sentence);
  expect(cited, 'the planted sentence is among them').toBeDefined();
  const c = cited!;
  const caption = [c.place, `section ${c.revision + 1} of ${max}`, `written down at revision ${c.revision + 1}, kept to revision ${c.keptUntil + 1}`]
    .filter(Boolean)
    .join(' · ');
  expect(c.keptUntil).toBe(max - 1);
  // The same sentence, place and revisions as the page shows.
  expect(shown).toContain(PLANTED.sentence);
  expect(shown).toContain(caption);

  const [md] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Export Markdown' }).click()]);
  const mdPath = info.outputPath('run.md');
  await md.saveAs(mdPath);
  const markdown = readFileSync(mdPath, 'utf8');
  expect(markdown).toContain(`**Sources:**`);
  expect(markdown).toContain(`> ${PLANTED.sentence}\n\n— ${caption}`);
  // Under the follow-up answer as well.
  expect(markdown.slice(markdown.indexOf('## Follow-up answers'))).toContain(`> ${PLANTED.sentence}`);

  // Deleted, then imported back from its JSON: the answer lists the same source again.
  await page.getByRole('button', { name: 'Delete run' }).click();
  await page.getByRole('button', { name: 'Yes, delete run' }).click();
  await expect(answer).toHaveCount(0);
  await openPlace(page, 'Library');
  await page.getByLabel('Import run').setInputFiles(jsonPath);
  await expect(answer).toContainText(PLANTED.code);
  await expect(answer.getByRole('note')).toContainText('Not written by a model');
  const again = sources.getByRole('figure').filter({ hasText: PLANTED.sentence });
  await expect(again).toHaveCount(1);
  await expect(again).toContainText(caption);
  await expect(again.getByRole('link', { name: `Show revision ${c.revision + 1} in the inspector` })).toBeVisible();

  // In Simplified Chinese the label says the same; the region keeps its name in that language.
  await page.getByRole('combobox', { name: 'Language' }).selectOption('zh-CN');
  await expect(page.getByRole('region', { name: '答案' }).getByRole('note')).toContainText('这不是模型写的答案');
  await expect(page.getByRole('region', { name: '答案' }).getByRole('note')).toContainText('WebLLM、llama.cpp 或 OpenAI 兼容服务器');
  await page.getByRole('combobox', { name: '语言' }).selectOption('en');
});
