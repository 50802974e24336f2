import { expect, type Page, test } from '@playwright/test';
import { bookWith } from './helpers';

/** The role of <mark>, which Playwright finds (ARIA 1.3's "mark") though its list of role names in TypeScript lacks it. */
const MARK = 'mark' as Parameters<Page['getByRole']>[0];

const QUESTION = 'Where was the warden of Gull Rock born?';
const FACT_1 = 'The warden of Gull Rock is Orrin Vale.';
const FACT_2 = 'Orrin Vale was born in Port Meridian, far from the sea.';

/** Frankenstein as its real bytes, the two parts of a fact planted far apart, each its own paragraph. */
const twoPartBook = () =>
  bookWith([
    [0.3, FACT_1],
    [0.7, FACT_2],
  ]);

/** The first revision whose memory holds `text`, as the inspector's search says: where the read wrote it down. */
async function firstRevisionWith(page: Page, text: string): Promise<number> {
  await page.getByLabel('Search memories').fill(text);
  const hint = page.getByText(/first written at revision \d+/);
  await expect(hint).toBeVisible();
  const n = Number(/revision (\d+)/.exec((await hint.textContent()) ?? '')![1]);
  await page.getByLabel('Search memories').fill('');
  return n;
}

test('an answer lists its sources, and a source opens the inspector at its revision with the sentence marked in the section', async ({ page }) => {
  test.setTimeout(240_000);
  await page.goto('/');
  await page.getByLabel('Document').setInputFiles({ name: 'frankenstein.txt', mimeType: 'text/plain', buffer: twoPartBook() });
  await page.getByText(/frankenstein\.txt — .*tokens/).waitFor();
  await page.getByLabel('Question').fill(QUESTION);
  await page.getByLabel('Chunk size (tokens)').fill('2000');
  await page.getByRole('button', { name: 'Read' }).click();
  const answer = page.getByRole('region', { name: 'Answer' });
  await expect(answer).toContainText('Orrin Vale', { timeout: 90_000 });
  const total = Number(await page.getByRole('progressbar', { name: 'Reading progress' }).getAttribute('aria-valuemax'));

  // Both parts of the fact are cited, each at the section that read it.
  const sources = answer.getByRole('region', { name: 'Sources' });
  const cited = sources.getByRole('figure');
  const [first, second] = [await firstRevisionWith(page, 'Gull Rock is Orrin Vale'), await firstRevisionWith(page, 'Port Meridian')];
  expect(first).toBeLessThan(second);
  for (const [fact, n] of [
    [FACT_1, first],
    [FACT_2, second],
  ] as const) {
    const item = cited.filter({ hasText: fact });
    await expect(item).toHaveCount(1);
    await expect(item).toContainText(`section ${n} of ${total}`);
    await expect(item).toContainText(`written down at revision ${n}`);
    await expect(item.getByRole('link', { name: `Show revision ${n} in the inspector` })).toBeVisible();
  }

  // Following a source: the inspector at that revision, the cited sentence marked in the section pane and focused.
  const section = page.getByRole('region', { name: 'Section' });
  await cited.filter({ hasText: FACT_2 }).getByRole('link').click();
  await expect(section.getByRole('heading')).toContainText(`Section ${second} of ${total}`);
  const mark = section.getByRole(MARK).filter({ hasText: FACT_2 });
  await expect(mark).toHaveCount(1);
  await expect(mark).toContainText(`Cited sentence: ${FACT_2}`);
  await expect(mark).toBeFocused();
  // The section reads as paragraphs: the book's hard line breaks are not kept, and the cited sentence has one ring.
  const shownText = await section.locator('pre').evaluate((pre) => pre.textContent ?? '');
  expect(shownText).not.toMatch(/\S[^\S\n]*\n[^\S\n]*\S/);
  expect(shownText).toContain('\n\n');
  expect(await mark.evaluate((m) => m.getClientRects().length)).toBe(1);
  await expect(page).toHaveURL(new RegExp(`[?&]rev=${second}\\b.*[?&]cite=\\d+-\\d+`));

  // By keyboard: the other source, with Enter.
  await cited.filter({ hasText: FACT_1 }).getByRole('link').focus();
  await page.keyboard.press('Enter');
  await expect(section.getByRole('heading')).toContainText(`Section ${first} of ${total}`);
  await expect(section.getByRole(MARK).filter({ hasText: `Cited sentence: ${FACT_1}` })).toBeFocused();

  // The link's address shows the same after a reload.
  await page.reload();
  await expect(section.getByRole('heading')).toContainText(`Section ${first} of ${total}`);
  await expect(section.getByRole(MARK).filter({ hasText: `Cited sentence: ${FACT_1}` })).toHaveCount(1);

  // The memory pane says where each of its sentences came from.
  await page.getByRole('slider', { name: 'Revision' }).fill(String(total));
  await expect(section.getByRole('heading')).toContainText(`Section ${total} of ${total}`);
  const memory = page.getByRole('region', { name: 'Memory', exact: true });
  await memory.getByRole('button', { name: 'Where each sentence came from' }).click();
  const notes = memory.getByRole('list', { name: 'Where the sentences of this memory came from' });
  await expect(
    notes
      .getByRole('listitem')
      .filter({ hasText: FACT_2 })
      .first()
      .getByRole('link', { name: `Show revision ${second} in the inspector` }),
  ).toBeVisible();
  // Each thing said once: the memory's sentence is the book's word for word, so it is not quoted again as its source;
  // notes side by side with the same sources (a sentence's clauses) are one item.
  const items = notes.getByRole('listitem');
  expect((await items.filter({ hasText: FACT_2 }).first().innerText()).split(FACT_2)).toHaveLength(2);
  const sourcesOf = await items.evaluateAll((lis) => lis.map((li) => [...li.querySelectorAll('a')].map((a) => a.href).join(' ')));
  for (let i = 1; i < sourcesOf.length; i++) if (sourcesOf[i]) expect(sourcesOf[i]).not.toBe(sourcesOf[i - 1]);
  // The list scrolls in its own box: the page does not grow with the memory.
  expect((await notes.boundingBox())!.height).toBeLessThanOrEqual(page.viewportSize()!.height);

  // A follow-up answer lists its own sources.
  const box = page.getByRole('textbox', { name: 'Ask this memory' });
  await box.fill('Who is the warden of Gull Rock?');
  await box.press('Enter');
  const followUp = page.getByRole('list', { name: 'Follow-up answers' }).getByRole('listitem').first();
  await expect(followUp.getByRole('region', { name: 'Sources' }).getByRole('figure').filter({ hasText: FACT_1 })).toContainText(`section ${first} of ${total}`);

  // A reply that answers nothing cites nothing: no Sources under it, not the reply quoted as its own unsourced claim.
  await box.fill('What did the zebra eat?');
  await box.press('Enter');
  const nothing = page
    .getByRole('list', { name: 'Follow-up answers' })
    .getByRole('listitem')
    .filter({ hasText: 'The memory holds nothing that answers the question.' });
  await expect(nothing).toHaveCount(1);
  await expect(nothing.getByRole('region', { name: 'Sources' })).toHaveCount(0);
});
