import { expect, type Page, test } from '@playwright/test';
import { violationsInBothThemes } from './axe';
import { bookWith, connectServer, storedCounts, withOwnServer } from './helpers';

/** The role of <mark>, which Playwright finds (ARIA 1.3's "mark") though its list of role names in TypeScript lacks it. */
const MARK = 'mark' as Parameters<Page['getByRole']>[0];

const FACT = 'The lighthouse keeper Ortiz buried the brass compass under the old mill at Calloway.';
const QUESTION = 'Where did the lighthouse keeper Ortiz bury the brass compass?';
/** Planted past where the read stops, so that the search reaches chunks the read never reads. */
const LATER = 'Ortiz, the old lighthouse keeper, never spoke of it again.';

test('InfMem with the extractive engine stops before the end of a long book and shows where, its plans and the passages it retrieved', async ({ page }) => {
  test.setTimeout(120_000);
  await page.goto('/');
  // Frankenstein (about twenty chunks of 5,000 tokens) with the fact planted near its start, and a mention of Ortiz past the middle.
  await page.getByLabel('Document').setInputFiles({
    name: 'frankenstein.txt',
    mimeType: 'text/plain',
    buffer: bookWith([
      [0.01, FACT],
      [0.6, LATER],
    ]),
  });
  await page.getByText(/frankenstein\.txt — .*tokens/).waitFor();
  await page.getByLabel('Question').fill(QUESTION);
  await page.getByRole('combobox', { name: 'Engine' }).selectOption('extractive');
  await page.getByRole('combobox', { name: 'Method' }).selectOption('infmem');
  await expect(page.getByRole('spinbutton', { name: 'Stop after N votes' })).toHaveValue('3');
  await expect(page.getByRole('checkbox', { name: 'Thinking' })).toBeChecked();
  // InfMem fixes its sizes: MemAgent's fields are not offered.
  await expect(page.getByLabel('Chunk size (tokens)')).toHaveCount(0);
  await page.getByRole('button', { name: 'Read' }).click();

  const answer = page.getByRole('region', { name: 'Answer' });
  await expect(answer).toContainText('under the old mill at Calloway', { timeout: 90_000 });
  // Where it stopped, with its votes, and the chunks it never read.
  const stop = page.getByText(/^Stopped before chunk 4 of (\d+): 3 votes to stop in a row\. Chunks 4 to \1 were never read\.$/);
  await expect(stop).toBeVisible();
  const total = Number(/of (\d+)/.exec((await stop.textContent()) ?? '')![1]);
  expect(total).toBeGreaterThan(10);
  await expect(page.getByText(/^Done · 3 of \d+ chunks · stopped early, before chunk 4$/)).toBeVisible();
  await page.getByText('Run settings').click();
  await expect(page.getByRole('definition').filter({ hasText: 'InfMem, stop after 3 votes in a row, thinking on' })).toBeVisible();

  // Three chunks read, each entry saying its plan: a search first, then two votes to stop.
  const entries = page.getByRole('list', { name: 'Memory revisions' }).getByRole('listitem');
  await expect(entries).toHaveCount(3);
  await expect(entries.nth(0)).toHaveAccessibleName(/searched “[^”]*lighthouse[^”]*”/);
  await expect(entries.nth(1)).toHaveAccessibleName(/voted to stop \(1 of 3\)/);
  await expect(entries.nth(2)).toHaveAccessibleName(/voted to stop \(2 of 3\)/);

  // The newest step's plan, then the first: its search and the four passages it retrieved.
  const plan = page.getByRole('region', { name: 'Plan before this chunk' });
  await expect(plan).toContainText('Voted to stop (2 of 3 in a row)');
  await entries.nth(0).getByRole('button').click();
  await expect(plan).toContainText(/Searched for “[^”]*lighthouse[^”]*”/);
  const passages = plan.getByRole('list', { name: 'Retrieved passages' }).getByRole('listitem');
  await expect(passages).toHaveCount(4);
  const fact = passages.filter({ hasText: 'brass compass' });
  await expect(fact).toHaveCount(1);
  await expect(fact).toContainText(/Passage \d, from chunk 1/);

  // Its link opens its place in the book: the first section, the passage marked and focused.
  await fact.getByRole('link', { name: /^Open passage \d in the book$/ }).click();
  const section = page.getByRole('region', { name: 'Section' });
  await expect(section.getByRole('heading')).toContainText(`Section 1 of ${total}`);
  const mark = section.getByRole(MARK).filter({ hasText: FACT });
  await expect(mark).toHaveCount(1);
  await expect(mark).toBeFocused();
  await expect(page).toHaveURL(/[?&]rev=1\b.*[?&]cite=\d+-\d+/);

  // A source of the answer found in a passage of a chunk the read never read: its link opens the step that retrieved it,
  // where the passage is marked and focused, and the passage's link (from the keyboard) opens that chunk, never read, on the sentence.
  const source = answer.getByRole('figure').filter({ hasText: 'mighty revolution' });
  await source.getByRole('link', { name: 'Show revision 1 in the inspector' }).click();
  const holding = passages.filter({ hasText: 'This passage holds the cited sentence:' });
  await expect(holding).toBeFocused();
  const chunk = Number(/from chunk (\d+) \(not read\)/.exec((await holding.textContent()) ?? '')![1]);
  expect(chunk).toBeGreaterThan(4);
  await holding.getByRole('link', { name: /^Open passage \d in the book$/ }).press('Enter');
  await expect(section.getByRole('heading')).toContainText(`Section ${chunk} of ${total} · never read`);
  await expect(section.getByRole(MARK).filter({ hasText: 'mighty revolution' })).toBeFocused();
  const never = page.getByRole('region', { name: 'Chunk never read' });
  await expect(never).toContainText('The read stopped before chunk 4, after 3 votes to stop in a row, so it never read this chunk');
  await expect(page.getByRole('region', { name: 'Memory', exact: true })).toHaveCount(0);
  expect(await violationsInBothThemes(page, 'a chunk never read')).toEqual([]);
  await never.getByRole('button', { name: 'Show revision 1' }).press('Enter');
  await expect(plan).toContainText(/Searched for/);
  // The plan, its passages and the stop note pass axe in both themes, as the rest of the run view does.
  expect(await violationsInBothThemes(page, 'an InfMem run')).toEqual([]);
});

test('InfMem with a server needs its two pinned files: the form says they are missing, a mirror without them and another file are refused, and Read says how to get them', async ({
  page,
}) => {
  await withOwnServer(async (server) => {
    await page.goto('/');
    await page
      .getByLabel('Document')
      .setInputFiles({ name: 'logbook.txt', mimeType: 'text/plain', buffer: Buffer.from('The logbook was kept in the archive.') });
    await page.getByText(/logbook\.txt — .*tokens/).waitFor();
    await page.getByLabel('Question').fill('Where was the logbook kept?');
    await connectServer(page, server.url);
    await page.getByRole('combobox', { name: 'Method' }).selectOption('infmem');
    const files = page.getByRole('region', { name: 'InfMem prompt files' });
    await expect(files).toContainText('infmem.py: not here yet.');
    await expect(files).toContainText('qwen_fncall_prompt.py: not here yet.');

    // Mirrors that do not hold them (the test server's own address): the worker fetches from there, and says why it failed.
    const mirror = `${server.url}/no-mirror`;
    for (const name of ['infmem.py', 'qwen_fncall_prompt.py']) {
      await files.getByLabel(`Mirror of ${name}`).fill(mirror);
      await files.getByLabel(`Mirror of ${name}`).press('Enter');
    }
    await expect(files.getByText(`${mirror}/taskutils/memory_eval/utils/infmem.py`)).toBeVisible();
    await expect(files.getByText(`${mirror}/qwen_agent/llm/fncall_prompts/qwen_fncall_prompt.py`)).toBeVisible();
    await files.getByRole('button', { name: 'Fetch InfMem files' }).click();
    await expect(files.getByRole('alert')).toContainText(`infmem.py: not here yet — ${mirror}/taskutils/memory_eval/utils/infmem.py could not be fetched`);

    // A file that is neither pinned file is refused by its hash.
    const chooser = page.waitForEvent('filechooser');
    await files.getByRole('button', { name: 'Import InfMem file' }).click();
    await (await chooser).setFiles({ name: 'infmem.py', mimeType: 'text/x-python', buffer: Buffer.from('PROMPT = "not the pinned file"\n') });
    await expect(files.getByRole('alert')).toContainText(/"infmem\.py" was refused: its SHA-256 is [0-9a-f]{64}, which is not that of infmem\.py/);

    // Read is refused in words that say how to get them, and nothing is stored.
    await page.getByRole('button', { name: 'Read' }).click();
    await expect(page.getByRole('alert').filter({ hasText: 'go online, set a mirror, or download' })).toContainText('and import it (infmem.py)');
    expect((await storedCounts(page)).runs).toBe(0);
  });
});
