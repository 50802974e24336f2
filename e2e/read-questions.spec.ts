import { expect, test } from '@playwright/test';
import { heldAt, heldRuns, holdSteps, PLANTED, plantedBook, storedRunsAndRevisions } from './helpers';
import { openPlace } from './places';
import { violationsInBothThemes } from './axe';

const FACTS = [
  { sentence: PLANTED.sentence, question: PLANTED.question, answer: PLANTED.code },
  { sentence: 'The ferry to Carrow Island leaves from pier 17.', question: 'From which pier does the ferry to Carrow Island leave?', answer: 'pier 17' },
  { sentence: 'The lighthouse keeper of Carrow Island is named Ada Venn.', question: 'Who is the lighthouse keeper of Carrow Island?', answer: 'Ada Venn' },
];

/** About 40,000 characters of Frankenstein around its planted vault code, with the other two facts planted before and after it. */
function threeFactBook(): Buffer {
  const book = plantedBook(0.6).toString('latin1');
  const at = book.indexOf(PLANTED.sentence);
  const text = book.slice(at - 20_000, at + 20_000);
  const para = (from: number) => text.indexOf('\r\n\r\n', from);
  const [a, b] = [para(5_000), para(32_000)];
  return Buffer.from(`${text.slice(0, a)}\r\n\r\n${FACTS[1]!.sentence}${text.slice(a, b)}\r\n\r\n${FACTS[2]!.sentence}${text.slice(b)}`, 'latin1');
}

test('three questions asked with one press of Read are read together; a reload mid-read resumes all three, and the page shows each answer with its sources', async ({
  page,
}) => {
  await page.goto('/');
  await page.getByLabel('Document').setInputFiles({ name: 'excerpt.txt', mimeType: 'text/plain', buffer: threeFactBook() });
  await page.getByText(/excerpt\.txt — .*tokens/).waitFor();
  await page.getByLabel('Question', { exact: true }).fill(FACTS[0]!.question);
  for (const [i, fact] of FACTS.slice(1).entries()) {
    await page.getByRole('button', { name: 'Add a question' }).click();
    await expect(page.getByLabel(`Question ${i + 2}`, { exact: true })).toBeFocused();
    await page.keyboard.type(fact.question);
  }
  // The form says how this engine writes several questions' memories.
  await expect(page.getByText('Read reads the book once for all 3 questions')).toBeVisible();
  // The estimate counts every question, and says so.
  await expect(page.getByRole('note', { name: 'Estimate' })).toContainText('This counts all 3 questions');
  await page.getByRole('spinbutton', { name: 'Chunk size (tokens)' }).fill('400');

  // Every question's fourth step is held: the read is midway, with nothing of chunk 4 stored.
  await holdSteps(page, 3);
  await page.getByRole('button', { name: 'Read' }).click();
  await heldAt(page, 3);
  await expect.poll(() => heldRuns(page, 3)).toBe(3);
  const read = page.getByRole('region', { name: 'Questions of this read' });
  const book = read.getByRole('progressbar', { name: 'Book read for all questions' });
  await expect(book).toHaveAttribute('aria-valuenow', '3');
  await expect(book).toHaveAttribute('aria-valuetext', /^3 of \d+ chunks read · 3 of 3 questions still writing$/);
  // What the bar is, and its count, are shown too, not only said.
  await expect(read.getByText(/^Book read for all questions: 3 of \d+ chunks read · 3 of 3 questions still writing$/)).toBeVisible();
  for (const fact of FACTS) await expect(read.getByRole('article', { name: fact.question })).toContainText('Reading…');
  const before = await storedRunsAndRevisions<{ id: string; readId?: string; nextChunk: number }, { runId: string; index: number; committedAt: number }>(page);
  expect(before.runs.map((r) => r.nextChunk)).toEqual([3, 3, 3]);
  expect(new Set(before.runs.map((r) => r.readId)).size).toBe(1);
  expect(before.runs[0]!.readId).toBeTruthy();

  // The read pauses and resumes as one: every question, with one press each.
  await read.getByRole('button', { name: 'Pause all questions' }).click();
  await expect(read.getByRole('button', { name: 'Resume all questions' })).toBeVisible();
  for (const fact of FACTS) await expect(read.getByRole('article', { name: fact.question })).toContainText('Paused');
  await read.getByRole('button', { name: 'Resume all questions' }).click();
  await expect(read.getByRole('button', { name: 'Pause all questions' })).toBeVisible();
  await expect.poll(() => heldRuns(page, 3)).toBe(3);

  // A reload with the steps in hand: the next worker reads every question on from chunk 4.
  await page.reload();
  for (const fact of FACTS) {
    const answer = page.getByRole('region', { name: 'Questions of this read' }).getByRole('article', { name: fact.question });
    await expect(answer.getByText(fact.answer).first()).toBeVisible({ timeout: 90_000 });
    // Its sources, traced once it was answered: the revision that wrote the fact down.
    await expect(answer.getByRole('region', { name: 'Sources' }).getByRole('link').first()).toBeVisible({ timeout: 30_000 });
  }
  await expect(page.getByRole('progressbar', { name: 'Book read for all questions' })).toHaveAttribute('aria-valuetext', /· 0 of 3 questions still writing$/);
  const after = await storedRunsAndRevisions<{ id: string; status: string; nextChunk: number }, { runId: string; index: number; committedAt: number }>(page);
  for (const run of after.runs) {
    expect(run.status).toBe('done');
    const revisions = after.revisions.filter((r) => r.runId === run.id);
    // Each chunk stored once, and the three read before the reload kept as they were.
    expect(revisions.map((r) => r.index)).toEqual([...Array(run.nextChunk).keys()]);
    expect(run.nextChunk).toBeGreaterThan(8);
    const kept = before.revisions.filter((r) => r.runId === run.id);
    expect(revisions.slice(0, 3)).toEqual(kept);
  }

  // The inspector shows the revisions of whichever question is chosen.
  const runRegion = page.getByRole('region', { name: 'Run' });
  await read.getByRole('button', { name: `Show its revisions: ${FACTS[2]!.question}` }).click();
  await expect(runRegion.getByRole('heading', { level: 2 })).toHaveText(FACTS[2]!.question);
  await expect(read.getByRole('button', { name: `Show its revisions: ${FACTS[2]!.question}` })).toHaveAttribute('aria-pressed', 'true');
  // Focus goes to that question's revisions, and its entry in the list says they are the ones in view.
  await expect(runRegion.getByRole('heading', { name: `Revisions of: ${FACTS[2]!.question}` })).toBeFocused();
  await expect(read.getByRole('article', { name: FACTS[2]!.question })).toContainText('Its revisions are shown below.');
  await expect(read.getByRole('article', { name: FACTS[0]!.question })).not.toContainText('Its revisions are shown below.');
  // Each answer is shown once, in the list: no second Answer box for the question in view.
  await expect(runRegion.getByRole('region', { name: 'Answer' })).toHaveCount(0);

  expect(await violationsInBothThemes(page, 'a read of three questions')).toEqual([]);

  // The Library lists the read with its three questions.
  await openPlace(page, 'Library');
  const group = page.getByRole('navigation', { name: 'Runs' }).getByRole('group', { name: 'One read of excerpt.txt: 3 questions' });
  for (const fact of FACTS) await expect(group.getByRole('button', { name: fact.question })).toBeVisible();
  // One entry, named on screen as well as for a screen reader.
  await expect(page.getByRole('navigation', { name: 'Runs' }).getByText('One read of excerpt.txt: 3 questions', { exact: true })).toBeVisible();

  // Deleting the read deletes every question of it, asked first in place.
  await group.getByRole('button', { name: FACTS[0]!.question }).click();
  await page.getByRole('button', { name: 'Delete this read' }).click();
  const confirm = page.getByRole('group', { name: 'Confirm delete read' });
  await expect(confirm).toContainText('Delete this read and all 3 of its questions? excerpt.txt stays in the Library.');
  await expect(confirm.getByRole('button', { name: 'Keep read' })).toBeFocused();
  await confirm.getByRole('button', { name: 'Yes, delete read' }).click();
  await expect(group).toHaveCount(0);
  expect((await storedRunsAndRevisions(page)).runs).toEqual([]);
});
