import { expect, test } from '@playwright/test';
import { PLANTED, plantedBook, range, readBook, readHeldAt, storedCounts, storedRevisionIndexes, withOwnServer } from './helpers';

test('reads Frankenstein with a planted code and answers from memory', async ({ page }) => {
  await page.goto('/');
  await expect(page.getByRole('combobox', { name: 'Engine' })).toHaveValue('extractive');
  await readBook(page, plantedBook(0.6));
  await expect(page.getByRole('region', { name: 'Answer' })).toContainText(PLANTED.code);

  const progress = page.getByRole('progressbar', { name: 'Reading progress' });
  const max = Number(await progress.getAttribute('aria-valuemax'));
  expect(max).toBeGreaterThan(10);
  await expect(progress).toHaveAttribute('aria-valuenow', String(max));
  expect(Object.values(await storedRevisionIndexes(page))).toEqual([range(max)]);
  const list = page.getByRole('list', { name: 'Memory revisions' });
  await expect(list.getByRole('listitem').first()).toHaveAttribute('aria-setsize', String(max));

  // The chunk that holds the planted sentence: its Section shows it, its Memory keeps the code.
  await page.getByLabel('Search memories').fill(PLANTED.code);
  await expect(page.getByText(/first written at revision (\d+)/)).toBeVisible();
  const first = Number(/revision (\d+)/.exec((await page.getByText(/first written at revision/).textContent()) ?? '')?.[1]);
  expect(first).toBeGreaterThan(Math.floor(max * 0.45)); // planted near 60% of the book
  await page.getByRole('button', { name: 'Go to first match' }).click();
  const section = page.getByRole('region', { name: 'Section' });
  const memory = page.getByRole('region', { name: 'Memory', exact: true });
  await expect(section).toContainText(`Section ${first} of ${max}`);
  await expect(section).toContainText(PLANTED.sentence);
  await expect(memory).toContainText(PLANTED.code);
  // The code entered memory at that chunk, not before.
  await list
    .getByRole('listitem', { name: new RegExp(`^Revision ${first}:`) })
    .getByRole('button')
    .click();
  await page.keyboard.press('ArrowUp');
  await expect(section).toContainText(`Section ${first - 1} of ${max}`);
  await expect(memory).not.toContainText(PLANTED.code);
  // Before anything is kept the memory is the read's empty start: said as such, not shown as memory text.
  await page.keyboard.press('Home');
  await expect(section).toContainText(`Section 1 of ${max}`);
  await expect(memory).toContainText('Empty: the read starts with no memory, and none has been written yet.');
  await expect(memory).not.toContainText('No previous memory');
  await expect(page.getByRole('region', { name: 'Memory changes' })).not.toContainText('No previous memory');
});

// The two tests below read through an OpenAI-compatible server of their own, which holds a step in flight
// until the test lets it go: the reload and the pause come while the run is reading, however fast this machine is.

test('a reload mid-run resumes from the next chunk without losing or repeating a revision', async ({ page }) => {
  await withOwnServer(async (server) => {
    await readHeldAt(page, server, plantedBook(0.3), 20);
    const progress = page.getByRole('progressbar', { name: 'Reading progress' });
    await expect(progress).toHaveAttribute('aria-valuenow', '20');
    await page.reload();
    server.release();

    await expect(page.getByRole('region', { name: 'Answer' })).toContainText(PLANTED.code, { timeout: 90_000 });
    const max = Number(await progress.getAttribute('aria-valuemax'));
    expect(max).toBeGreaterThan(20);
    await expect(progress).toHaveAttribute('aria-valuenow', String(max));
    expect(Object.values(await storedRevisionIndexes(page))).toEqual([range(max)]);
    expect((await storedCounts(page)).memories).toBe(max);
  });
});

test('Pause stops the run and Resume continues it after a reload', async ({ page }) => {
  await withOwnServer(async (server) => {
    await readHeldAt(page, server, plantedBook(0.5), 5);
    const progress = page.getByRole('progressbar', { name: 'Reading progress' });
    await expect(progress).toHaveAttribute('aria-valuenow', '5');
    await page.getByRole('button', { name: 'Pause' }).click();
    await expect(page.getByRole('button', { name: 'Resume' })).toBeVisible();
    server.release();
    // The step in flight was dropped: nothing of it is stored.
    const runId = Object.keys(await storedRevisionIndexes(page))[0]!;
    expect(await storedRevisionIndexes(page)).toEqual({ [runId]: range(5) });
    await page.reload();
    await expect(page.getByRole('button', { name: 'Resume' })).toBeVisible();
    await expect(progress).toHaveAttribute('aria-valuenow', '5');

    await page.getByRole('button', { name: 'Resume' }).click();
    await expect(page.getByRole('region', { name: 'Answer' })).toContainText(PLANTED.code, { timeout: 90_000 });
    const max = Number(await progress.getAttribute('aria-valuemax'));
    expect(await storedRevisionIndexes(page)).toEqual({ [runId]: range(max) });
  });
});

test.describe('bad input gets a specific alert and stores nothing', () => {
  const cases: { name: string; file: { name: string; mimeType: string; buffer: Buffer }; alert: RegExp }[] = [
    { name: 'an empty file', file: { name: 'empty.txt', mimeType: 'text/plain', buffer: Buffer.alloc(0) }, alert: /empty \(0 bytes\)/ },
    {
      name: 'an image',
      file: {
        name: 'cover.png',
        mimeType: 'image/png',
        buffer: Buffer.from('89504e470d0a1a0a0000000d4948445200000001000000010806000000', 'hex'),
      },
      alert: /PNG image, not text/,
    },
    {
      // UTF-16 by its byte order mark, but holding an unpaired surrogate: no text in any encoding.
      name: 'bytes that are no supported text encoding',
      file: { name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from([0xff, 0xfe, 0x41, 0x00, 0x00, 0xd8, 0x41, 0x00]) },
      alert: /not valid UTF-16 text/,
    },
    {
      name: 'binary data',
      file: { name: 'data.txt', mimeType: 'text/plain', buffer: Buffer.from(Array.from({ length: 400 }, (_, i) => (i * 7) % 32)) },
      alert: /binary data/,
    },
  ];
  for (const c of cases) {
    test(c.name, async ({ page }) => {
      await page.goto('/');
      await page.getByLabel('Document').setInputFiles(c.file);
      await expect(page.getByRole('alert')).toHaveText(c.alert);
      expect((await storedCounts(page)).documents ?? 0).toBe(0);
    });
  }

  test('an empty question', async ({ page }) => {
    await page.goto('/');
    await page.getByLabel('Document').setInputFiles({ name: 'short.txt', mimeType: 'text/plain', buffer: Buffer.from('A short book.\n') });
    await expect(page.getByText(/short\.txt — /)).toBeVisible();
    await page.getByLabel('Question').fill('   ');
    await page.getByRole('button', { name: 'Read' }).click();
    await expect(page.getByRole('alert')).toHaveText(/Enter a question/);
    expect((await storedCounts(page)).runs ?? 0).toBe(0);
    // A size out of range is said beside its field as it is typed, and no estimate is given for it.
    const chunk = page.getByLabel('Chunk size (tokens)');
    const estimate = page.getByRole('note', { name: 'Estimate' });
    await expect(estimate).toBeVisible();
    await chunk.fill('50');
    await expect(chunk).toHaveAttribute('aria-invalid', 'true');
    await expect(chunk).toHaveAccessibleDescription('Chunk size must be a whole number of tokens from 100 to 100,000.');
    await expect(estimate).toHaveCount(0);
    await chunk.fill('2000');
    await expect(chunk).not.toHaveAttribute('aria-invalid');
    await expect(estimate).toBeVisible();
    await page.getByRole('region', { name: 'Settings' }).getByText('Sampling and prompts').click();
    const seed = page.getByRole('spinbutton', { name: 'Seed' });
    await seed.fill('-1');
    await expect(seed).toHaveAccessibleDescription('Seed must be a whole number from 0 to 2,147,483,647, or empty.');
    await expect(estimate).toHaveCount(0);
  });
});
