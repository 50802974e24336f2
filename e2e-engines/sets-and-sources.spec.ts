import { expect, test } from './fixtures';
import { expectAnswer, fileFor, progress, stored } from './app';
import { expectCount, expectText } from './screen';
import { FACT_1, FACT_2, QUESTION, threeBooks } from '../e2e/three-books';

/**
 * Three books (text, EPUB, PDF) chosen at once, reordered, read with one
 * memory; the answer cites each fact from its own book and section, and a
 * source opens the inspector there with the sentence marked and focused.
 */
test('books read together answer from two of them, citing each fact at the section of its book', async ({ tab, ui: page }, info) => {
  const { harbour, weather, families } = await threeBooks();
  const paths = [harbour, weather, families].map((b) => fileFor(info.outputPath(b.name), b.buffer));
  await tab.goto('/');
  await expect.poll(() => page.getByRole('combobox', { name: 'Engine' }).inputValue()).toBe('extractive');
  await page.getByLabel('Document').upload(paths);
  await page.getByText(/^3 books — .* tokens: read in this order/).waitFor();
  const order = page.getByRole('list', { name: 'Books to read, in order' });
  await expectCount(order.getByRole('listitem', { name: 'Book 3 of 3: families.pdf' }), 1);
  await page.getByRole('button', { name: 'Move families.pdf up' }).click();
  await expectCount(order.getByRole('listitem', { name: 'Book 2 of 3: families.pdf' }), 1);
  await page.getByRole('button', { name: 'Move families.pdf down' }).click();
  await expectCount(order.getByRole('listitem', { name: 'Book 3 of 3: families.pdf' }), 1);
  await expectCount(order.getByRole('listitem', { name: 'Book 2 of 3: The Weather Book (weather.epub)' }), 1);

  await page.getByLabel('Question').fill(QUESTION);
  await page.getByLabel('Chunk size (tokens)').fill('300');
  await page.getByLabel('Memory size (tokens)').fill('256');
  await page.getByRole('button', { name: 'Read', exact: true }).click();
  await expectAnswer(page, 'Port Meridian');
  const { max } = await progress(page);
  expect((await stored.counts(tab)).runs).toBe(1);

  // Each fact cited once, from its book: the first from harbour.txt, the second from families.pdf, further on.
  const sources = page.getByRole('region', { name: 'Answer' }).getByRole('region', { name: 'Sources' });
  const figures = sources.getByRole('figure');
  // The sources are traced after the answer shows: read them once both facts are there.
  await expectText(sources, FACT_1);
  await expectText(sources, FACT_2);
  const texts: string[] = [];
  for (let i = 0; i < (await figures.count()); i++) texts.push(await figures.nth(i).text());
  const cited = (fact: string) => {
    const found = texts.filter((t) => t.includes(fact));
    expect(found, `one source quotes "${fact}"`).toHaveLength(1);
    return { index: texts.indexOf(found[0]!), section: Number(/section (\d+) of (\d+)/.exec(found[0]!)?.[1]) };
  };
  const [first, second] = [cited(FACT_1), cited(FACT_2)];
  expect(first.section).toBeLessThan(second.section);
  // Each source names its book, and the page of the PDF.
  expect(texts[first.index]).toContain(`harbour.txt · section ${first.section} of ${max}`);
  expect(texts[second.index]).toContain(`families.pdf · p. 2 · section ${second.section} of ${max}`);
  expect(second.section).toBeLessThanOrEqual(max);

  // The second source opens the inspector at its section of families.pdf, the sentence marked and focused.
  await figures
    .nth(second.index)
    .getByRole('link', { name: /^Show revision \d+ in the inspector$/ })
    .click();
  const section = page.getByRole('region', { name: 'Section', exact: true });
  await expectText(section, `Section ${second.section} of ${max} · families.pdf`);
  await expectText(section, `Cited sentence: ${FACT_2}`);
  await expect.poll(() => tab.evaluate(() => document.activeElement?.textContent ?? '')).toContain(FACT_2);

  // The sources are stored with the run: a reload shows them again.
  await tab.reload();
  await expectText(sources, FACT_1);
  await expectText(sources, FACT_2);
  await expectText(section, `Section ${second.section} of ${max} · families.pdf`);
});
