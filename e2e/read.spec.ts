import { expect, test } from '@playwright/test';
import { PLANTED, plantedBook, revisionNumbers, storedCounts } from './helpers';

test('reads Frankenstein with a planted code and answers from memory', async ({ page }) => {
  await page.goto('/');
  await page.getByLabel('Document').setInputFiles({ name: 'frankenstein.txt', mimeType: 'text/plain', buffer: plantedBook(0.6) });
  await expect(page.getByText(/frankenstein\.txt — .*tokens/)).toBeVisible();
  await page.getByLabel('Question').fill(PLANTED.question);
  await expect(page.getByRole('combobox', { name: 'Engine' })).toHaveValue('extractive');
  await page.getByRole('button', { name: 'Read' }).click();

  const answer = page.getByRole('region', { name: 'Answer' });
  await expect(answer).toContainText(PLANTED.code);

  const progress = page.getByRole('progressbar', { name: 'Reading progress' });
  const max = Number(await progress.getAttribute('aria-valuemax'));
  expect(max).toBeGreaterThan(10);
  await expect(progress).toHaveAttribute('aria-valuenow', String(max));
  expect(await revisionNumbers(page)).toEqual(Array.from({ length: max }, (_, i) => i + 1));

  // Find the chunk that holds the planted sentence by its Section, as a reader would.
  const revisions = page.getByRole('list', { name: 'Memory revisions' }).getByRole('listitem');
  const section = page.getByRole('region', { name: 'Section' });
  const memory = page.getByRole('region', { name: 'Memory' });
  let found = -1;
  for (let k = 1; k <= max && found < 0; k++) {
    await revisions.nth(k - 1).getByRole('button').click();
    await expect(section).toContainText(`Section ${k} of ${max}`);
    if ((await section.textContent())?.includes(PLANTED.sentence)) found = k;
  }
  expect(found).toBeGreaterThan(Math.floor(max * 0.45)); // planted near 60% of the book
  await expect(memory).toContainText(PLANTED.code);
  // The code entered memory at that chunk, not before.
  await revisions.nth(found - 2).getByRole('button').click();
  await expect(memory).not.toContainText(PLANTED.code);
});

test('a reload mid-run resumes from the next chunk without losing or repeating a revision', async ({ page }) => {
  await page.goto('/');
  await page.getByLabel('Document').setInputFiles({ name: 'frankenstein.txt', mimeType: 'text/plain', buffer: plantedBook(0.3) });
  await expect(page.getByText(/tokens$/)).toBeVisible();
  await page.getByLabel('Question').fill(PLANTED.question);
  await page.getByLabel('Chunk size (tokens)').fill('100');
  await page.getByRole('button', { name: 'Read' }).click();

  const progress = page.getByRole('progressbar', { name: 'Reading progress' });
  await expect.poll(async () => Number(await progress.getAttribute('aria-valuenow'))).toBeGreaterThanOrEqual(20);
  const max = Number(await progress.getAttribute('aria-valuemax'));
  const before = Number(await progress.getAttribute('aria-valuenow'));
  expect(before).toBeLessThan(max);
  await page.reload();

  await expect(page.getByRole('region', { name: 'Answer' })).toContainText(PLANTED.code, { timeout: 90_000 });
  await expect(progress).toHaveAttribute('aria-valuemax', String(max));
  await expect(progress).toHaveAttribute('aria-valuenow', String(max));
  expect(await revisionNumbers(page)).toEqual(Array.from({ length: max }, (_, i) => i + 1));
  expect((await storedCounts(page)).revisions).toBe(max);
});

test('Pause stops the run and Resume continues it after a reload', async ({ page }) => {
  await page.goto('/');
  await page.getByLabel('Document').setInputFiles({ name: 'frankenstein.txt', mimeType: 'text/plain', buffer: plantedBook(0.5) });
  await expect(page.getByText(/tokens$/)).toBeVisible();
  await page.getByLabel('Question').fill(PLANTED.question);
  await page.getByLabel('Chunk size (tokens)').fill('100');
  await page.getByRole('button', { name: 'Read' }).click();

  const progress = page.getByRole('progressbar', { name: 'Reading progress' });
  await expect.poll(async () => Number(await progress.getAttribute('aria-valuenow'))).toBeGreaterThanOrEqual(5);
  await page.getByRole('button', { name: 'Pause' }).click();
  await expect(page.getByRole('button', { name: 'Resume' })).toBeVisible();
  const paused = Number(await progress.getAttribute('aria-valuenow'));
  await page.reload();
  await expect(page.getByRole('button', { name: 'Resume' })).toBeVisible();
  await expect(progress).toHaveAttribute('aria-valuenow', String(paused));

  await page.getByRole('button', { name: 'Resume' }).click();
  await expect(page.getByRole('region', { name: 'Answer' })).toContainText(PLANTED.code, { timeout: 90_000 });
  const max = Number(await progress.getAttribute('aria-valuemax'));
  expect(await revisionNumbers(page)).toEqual(Array.from({ length: max }, (_, i) => i + 1));
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
      name: 'bytes that are no supported text encoding',
      file: { name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from([0x43, 0x61, 0x66, 0xe9, 0x20, 0xff, 0xfe, 0x80, 0x41]) },
      alert: /not valid UTF-8 or UTF-16 text/,
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
  });
});
