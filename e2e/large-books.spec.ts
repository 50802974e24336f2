import { closeSync, mkdtempSync, openSync, rmSync, truncateSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from '@playwright/test';
import { MAX_FILE_BYTES } from '../src/ingest/ingest';
import { FACT, prose } from '../test/fixtures/documents';
import { storedCounts, traceMainThread } from './helpers';
import { openPlace } from './places';

/**
 * A text file of exactly `bytes` bytes: the planted fact in its first
 * paragraphs, then varied prose with curly quotes. Those put the text beyond
 * Latin-1, so that the browser holds it two bytes a character: the costliest
 * case for a text of this size.
 */
function writeBook(path: string, bytes: number): { chars: number } {
  const fd = openSync(path, 'w');
  const head = `Chapter 1\n\n${prose(0)}\n\n${FACT.sentence}\n\n${prose(1)}\n\n`;
  const block = Array.from({ length: 64 }, (_, i) => `“${prose(i + 2)}” said the keeper’s daughter.`).join('\n\n') + '\n\n';
  const blockBytes = Buffer.from(block);
  let written = writeSync(fd, Buffer.from(head));
  let chars = head.length;
  for (; written + blockBytes.length <= bytes; chars += block.length) written += writeSync(fd, blockBytes);
  chars += writeSync(fd, Buffer.alloc(bytes - written, 'a'));
  closeSync(fd);
  return { chars };
}

test('a book at the 256 MB limit imports in parts and is read while the rest is stored', async ({ page }) => {
  test.setTimeout(480_000);
  const dir = mkdtempSync(join(tmpdir(), 'memagent-limit-'));
  const path = join(dir, 'limit.txt');
  const { chars } = writeBook(path, MAX_FILE_BYTES);
  expect(chars).toBeGreaterThan(70_000_000);
  try {
    await page.goto('/');
    await expect(page.getByRole('combobox', { name: 'Engine' })).toHaveValue('extractive');
    const mainThread = await traceMainThread(page);
    const started = Date.now();
    await page.getByLabel('Document').setInputFiles(path);
    const bar = page.getByRole('progressbar', { name: 'Import progress' });
    await expect(bar).toBeVisible();

    // Readable once its first part is stored: the Read form has it, while the bar goes on storing the rest.
    await expect(page.getByText(/^limit\.txt — 256\.0 MB, about [\d,]+ tokens \(counting…\)/)).toBeVisible({ timeout: 360_000 });
    const usableAt = Date.now();
    await page.getByLabel('Question').fill(FACT.question);
    await page.getByRole('button', { name: 'Read' }).click();
    const reading = page.getByRole('progressbar', { name: 'Reading progress' });
    await expect.poll(async () => Number(await reading.getAttribute('aria-valuenow')), { timeout: 120_000 }).toBeGreaterThanOrEqual(1);
    const firstStepAt = Date.now();
    await page.getByRole('button', { name: 'Pause' }).click();
    // Once paused, no newer revision takes the selection away.
    await expect(page.getByRole('button', { name: 'Resume' })).toBeVisible();
    // The first section, read back from the stored parts.
    await page.getByRole('slider', { name: 'Revision' }).fill('1');
    await expect(page.getByRole('region', { name: 'Section' })).toContainText(FACT.sentence);

    await expect(bar).toHaveCount(0, { timeout: 360_000 });
    const storedAt = Date.now();
    await openPlace(page, 'Library');
    const entry = page.getByRole('region', { name: 'Library' }).getByRole('listitem', { name: 'limit.txt' });
    await expect(entry).toContainText('256.0 MB');
    await expect(entry).not.toContainText('still being stored');
    // Every character is stored, in parts of 2^18.
    expect(await storedCounts(page)).toMatchObject({ documents: 1, textParts: Math.ceil(chars / 2 ** 18), runs: 1 });
    const longest = await mainThread.stop();
    test.info().annotations.push({
      type: 'timings',
      description:
        `usable after ${usableAt - started} ms, first step ${firstStepAt - usableAt} ms after that, stored after ${storedAt - started} ms; ` +
        `longest main-thread task ${longest.cpuMs.toFixed(0)} ms of CPU (${longest.wallMs.toFixed(0)} ms of wall-clock time)`,
    });
    // How long the page's main thread was busy at most is a speed: bench/big-books.ts measures it against its target.
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a file one byte over the 256 MB limit is refused before it is read', async ({ page }) => {
  const dir = mkdtempSync(join(tmpdir(), 'memagent-over-'));
  const path = join(dir, 'over.txt');
  // A sparse file: its size is all that is looked at.
  closeSync(openSync(path, 'w'));
  truncateSync(path, MAX_FILE_BYTES + 1);
  try {
    await page.goto('/');
    await page.getByLabel('Document').setInputFiles(path);
    await expect(page.getByRole('alert')).toHaveText(
      '"over.txt" is 268,435,457 bytes; the largest file this app reads is 256 MB (268,435,456 bytes). Split the book into parts and add them one by one.',
    );
    expect(await storedCounts(page)).toMatchObject({ documents: 0 });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

/** Words of IndexedDB's own messages and error names: none may reach the person. */
const RAW =
  /IndexedDB|\bIDB|DOMException|transaction|serialized|backing store|connection is|UnknownError|InvalidStateError|AbortError|QuotaExceededError|DataError/i;

test('when the browser closes the database during an import, the alert says so in words', async ({ page, baseURL }) => {
  test.setTimeout(300_000);
  const dir = mkdtempSync(join(tmpdir(), 'memagent-closed-'));
  const path = join(dir, 'closed.txt');
  writeBook(path, 64 * 1024 * 1024);
  try {
    await page.goto('/');
    // What clearing the site's data does: the browser closes every connection to its database. It happens
    // the moment the book is readable, while the rest of its text is still being stored.
    const cdp = await page.context().newCDPSession(page);
    await page.exposeBinding('__clearSiteData', () => cdp.send('Storage.clearDataForOrigin', { origin: new URL(baseURL!).origin, storageTypes: 'indexeddb' }));
    await page.evaluate(() =>
      new MutationObserver((_, observer) => {
        if (!/closed\.txt — /.test(document.body.innerText)) return;
        observer.disconnect();
        void (window as unknown as { __clearSiteData(): Promise<void> }).__clearSiteData();
      }).observe(document.body, { subtree: true, childList: true, characterData: true }),
    );
    await page.getByLabel('Document').setInputFiles(path);

    const alerts = page.getByRole('alert');
    await expect(alerts.filter({ hasText: "The browser closed this site's database" }).first()).toBeVisible({ timeout: 240_000 });
    for (const text of await alerts.allTextContents()) {
      expect(text).toMatch(/Reload (the|this) page/);
      expect(text).not.toMatch(RAW);
    }
    // After the reload the app works again, with nothing of the book left.
    await page.reload();
    await openPlace(page, 'Library');
    await expect(page.getByRole('region', { name: 'Library' })).toContainText('No documents yet');
    expect(await storedCounts(page)).toMatchObject({ documents: 0, textParts: 0 });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
