import { readFileSync } from 'node:fs';
import { expect, type Page, test } from '@playwright/test';
import {
  bookPages,
  CJK,
  encode,
  FACT,
  makeCorruptPdf,
  makeDocx,
  makeEncryptedPdf,
  makeEpub,
  makeHtml,
  makePdf,
  makeScannedPdf,
  prose,
} from '../test/fixtures/documents';
import { seededRandom } from '../src/core/random';
import { holdStore, storedCounts } from './helpers';
import { openPlace } from './places';

interface Upload {
  name: string;
  mimeType: string;
  buffer: Buffer;
}

const upload = (name: string, mimeType: string, bytes: Uint8Array | string): Upload => ({
  name,
  mimeType,
  buffer: Buffer.from(typeof bytes === 'string' ? new TextEncoder().encode(bytes) : bytes),
});

async function addDocument(page: Page, file: Upload): Promise<void> {
  await page.getByLabel('Document').setInputFiles(file);
}

/** Adds a file, asks the planted question with the extractive engine, and expects the code back. */
async function readFact(page: Page, file: Upload, question = FACT.question): Promise<void> {
  await addDocument(page, file);
  await expect(page.getByText(`${file.name} — `)).toBeVisible();
  await page.getByLabel('Question').fill(question);
  await page.getByRole('button', { name: 'Read' }).click();
  await expect(page.getByRole('region', { name: 'Answer' })).toContainText(FACT.code, { timeout: 30_000 });
}

test('every format, uploaded through the page, answers the planted question', async ({ page }) => {
  await page.goto('/');
  await expect(page.getByRole('combobox', { name: 'Engine' })).toHaveValue('extractive');
  const md = `# The Marlowe Papers\n\n## Chapter 1\n\n${prose(1)}\n\n## Chapter 2\n\n${prose(3)}\n\n${FACT.sentence}\n`;
  const files = [
    upload('marlowe.txt', 'text/plain', `${prose(1)}\n\n${FACT.sentence}\n\n${prose(2)}\n`),
    upload('marlowe.md', 'text/markdown', md),
    upload('marlowe.html', 'text/html', makeHtml()),
    upload('marlowe.epub', 'application/epub+zip', makeEpub()),
    upload('marlowe.pdf', 'application/pdf', await makePdf(bookPages())),
    upload('marlowe.docx', 'application/vnd.openxmlformats-officedocument.wordprocessingml.document', makeDocx()),
    upload('windows-1252.txt', 'text/plain', encode(`Café “naïve” — ${prose(2)}\n\n${FACT.sentence}\n`, 'windows-1252')),
  ];
  for (const file of files) await readFact(page, file);
  await expect(page.getByRole('progressbar', { name: 'Import progress' })).toHaveCount(0);

  // Chinese and Japanese in their legacy encodings: read, chunked and shown as written.
  await readFact(page, upload('chinese.txt', 'text/plain', encode(CJK.simplified, 'gb18030')), '马洛档案馆的保险库密码是什么？');
  await readFact(page, upload('japanese.txt', 'text/plain', encode(CJK.japanese, 'shift_jis')), 'マーロウ文書館の金庫の暗証番号は何ですか？');
  await expect(page.getByRole('region', { name: 'Section' })).toContainText('マーロウ文書館の金庫の暗証番号は4829137です。');

  // The page never ran the HTML's scripts, and every book is one Library entry.
  expect(await page.evaluate(() => (window as { __scriptRan?: boolean }).__scriptRan)).toBeUndefined();
  expect(await page.title()).toBe('memagent-web');
  await openPlace(page, 'Library');
  const library = page.getByRole('region', { name: 'Library' });
  await expect(
    library
      .getByRole('list', { name: 'Books' })
      .getByRole('listitem')
      .filter({ has: page.getByRole('button', { name: 'Delete' }) }),
  ).toHaveCount(files.length + 2);
  await expect(library.getByRole('listitem', { name: 'marlowe.pdf' })).toContainText('PDF · ');
  await expect(library.getByRole('listitem', { name: 'marlowe.pdf' })).toContainText('4 pages');
});

test('the Library keeps one entry per file, opens it, and deletes it with its runs', async ({ page }) => {
  await page.goto('/');
  const library = page.getByRole('region', { name: 'Library' });
  const book = upload('frankenstein-part.txt', 'text/plain', `Chapter 1\n\n${prose(1)}\n\nChapter 2\n\n${FACT.sentence}\n\n${prose(2)}\n`);
  await readFact(page, book);
  // The same bytes again, under another name: still one entry.
  await addDocument(page, { ...book, name: 'copy.txt' });
  await openPlace(page, 'Library');
  await expect(library.getByRole('listitem', { name: 'frankenstein-part.txt' })).toBeVisible();
  await expect(library.getByRole('listitem', { name: 'copy.txt' })).toHaveCount(0);
  const entry = library.getByRole('listitem', { name: 'frankenstein-part.txt' });
  await expect(entry.getByRole('list', { name: 'Runs of frankenstein-part.txt' })).toContainText(FACT.question);
  await expect(entry).toContainText(/tokens · added /);

  const other = upload('other.md', 'text/markdown', `# Other\n\n${prose(4)}\n`);
  await openPlace(page, 'Read');
  await addDocument(page, other);
  await expect(page.getByText('other.md — ')).toBeVisible();
  await openPlace(page, 'Library');
  // Open makes it the Read form's book, and shows the form.
  await entry.getByRole('button', { name: 'Open' }).click();
  await expect(page.getByText('frankenstein-part.txt — ')).toBeVisible();
  await openPlace(page, 'Library');
  await expect(page.getByRole('region', { name: 'Storage' })).toContainText(/ used of /);

  expect(await storedCounts(page)).toMatchObject({ documents: 2, textParts: 2, runs: 1 });
  await entry.getByRole('button', { name: 'Delete' }).click();
  await entry.getByRole('button', { name: 'Yes, delete' }).click();
  await expect(library.getByRole('listitem', { name: 'frankenstein-part.txt' })).toHaveCount(0);
  const counts = await storedCounts(page);
  expect(counts).toMatchObject({ documents: 1, textParts: 1, runs: 0, revisions: 0 });
  if ('memories' in counts) expect(counts.memories).toBe(0);
});

test('Project Gutenberg stripping is a setting, on by default', async ({ page }) => {
  await page.goto('/');
  await openPlace(page, 'Library');
  const library = page.getByRole('region', { name: 'Library' });
  const setting = library.getByRole('checkbox', { name: 'Remove Project Gutenberg header and licence' });
  await expect(setting).toBeChecked();
  await openPlace(page, 'Read');
  const gutenberg = (title: string) =>
    `The Project Gutenberg EBook of ${title}\n\n*** START OF THIS PROJECT GUTENBERG EBOOK ${title.toUpperCase()} ***\n\n` +
    `${prose(1)}\n\n${FACT.sentence}\n\n*** END OF THIS PROJECT GUTENBERG EBOOK ${title.toUpperCase()} ***\n\nLicence text.\n`;
  await addDocument(page, upload('stripped.txt', 'text/plain', gutenberg('Stripped')));
  await expect(page.getByText('stripped.txt — ')).toBeVisible();
  await openPlace(page, 'Library');
  await expect(library.getByRole('listitem', { name: 'stripped.txt' })).toContainText(/Project Gutenberg header \(\d+ characters\) and licence/);
  await setting.uncheck();
  await page.reload();
  await expect(setting).not.toBeChecked();
  await openPlace(page, 'Read');
  await addDocument(page, upload('kept.txt', 'text/plain', gutenberg('Kept')));
  await expect(page.getByText('kept.txt — ')).toBeVisible();
  await openPlace(page, 'Library');
  await expect(library.getByRole('listitem', { name: 'kept.txt' })).not.toContainText('header');
});

test('bad files get a specific alert and nothing is stored', async ({ page }) => {
  await page.goto('/');
  const alert = page.getByRole('alert');
  const noise = new Uint8Array(40_000).map((_, i) => (i * 7919 + 13) % 256);
  const cases: [Upload, RegExp][] = [
    [upload('empty.txt', 'text/plain', new Uint8Array(0)), /is empty \(0 bytes\)/],
    [upload('noise.txt', 'text/plain', noise), /contains binary data, not text/],
    [upload('broken.pdf', 'application/pdf', makeCorruptPdf()), /is damaged or not a PDF/],
    [upload('secret.pdf', 'application/pdf', makeEncryptedPdf()), /is encrypted with a password/],
    [upload('scan.pdf', 'application/pdf', await makeScannedPdf(2)), /has no text layer.*OCR/],
    [upload('fake.epub', 'application/epub+zip', '<html>not a zip</html>'), /is not a valid EPUB/],
    [upload('locked.epub', 'application/epub+zip', makeEpub({ drm: true })), /protected by DRM/],
    [upload('bomb.epub', 'application/epub+zip', makeEpub({ bomb: 80 * 1024 * 1024 })), /expands to more than 64 MB.*zip bomb/],
    [upload('app.html', 'text/html', '<html><body><script>window.__scriptRan = true</script></body></html>'), /no readable text/],
  ];
  for (const [file, message] of cases) {
    await addDocument(page, file);
    await expect(alert).toContainText(message);
    await expect(alert).toContainText(file.name);
  }
  expect(await page.evaluate(() => (window as { __scriptRan?: boolean }).__scriptRan)).toBeUndefined();
  expect(await storedCounts(page)).toMatchObject({ documents: 0, textParts: 0 });
  await openPlace(page, 'Library');
  await expect(page.getByRole('region', { name: 'Library' })).toContainText('No documents yet');
});

test('a book too large for the browser storage is refused with a clear message', async ({ page, baseURL }) => {
  await page.goto('/');
  // A quota the browser enforces: Chromium 150 keeps reporting a fixed quota to the page (navigator.storage.estimate()
  // ignores the override) but refuses writes past it. IndexedDB compresses what it stores, so the book is words made
  // of random letters: about 2 MB that still needs far more than the 256 KB allowed once compressed.
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Storage.overrideQuotaForOrigin', { origin: new URL(baseURL!).origin, quotaSize: 256 * 1024 });
  const big = randomWords(2 * 1024 * 1024);
  await addDocument(page, upload('big.txt', 'text/plain', big));
  await expect(page.getByRole('alert')).toContainText(
    /"big\.txt" (needs about .* MB of storage, but this browser allows this site only|does not fit in this browser's storage)/,
  );
  expect(await storedCounts(page)).toMatchObject({ documents: 0, textParts: 0 });
});

/** About `chars` characters of words made of random letters, in sentences: text that compresses little. */
function randomWords(chars: number): string {
  const random = seededRandom(7);
  const letters = 'abcdefghijklmnopqrstuvwxyz';
  const words: string[] = [];
  for (let length = 0; length < chars;) {
    const word = Array.from({ length: 2 + Math.floor(random() * 9) }, () => letters[Math.floor(random() * 26)]).join('');
    words.push(random() < 0.08 ? `${word}.` : word);
    length += word.length + 1;
  }
  return words.join(' ');
}

test('a large import shows its progress and leaves the page responsive', async ({ page }) => {
  test.setTimeout(240_000);
  await page.goto('/');
  // ~24 MB of varied text: long enough to watch, short enough for this suite.
  const paragraph = Array.from({ length: 40 }, (_, i) => prose(i)).join('\n\n');
  const big = upload('large.txt', 'text/plain', `${paragraph}\n\n`.repeat(Math.ceil((24 * 1024 * 1024) / paragraph.length)));
  // The book's text cannot be stored until the test lets it: the import is still under way below, on any machine.
  const letGo = await holdStore(page, 'textParts');
  await addDocument(page, big);
  const bar = page.getByRole('progressbar', { name: 'Import progress' });
  await expect(bar).toBeVisible();
  // The page answers while the worker imports: typing goes through (the main thread's longest task is measured in bench/big-books.ts).
  await page.getByLabel('Question').fill('Still typing while it imports?');
  await expect(page.getByLabel('Question')).toHaveValue('Still typing while it imports?');
  await expect(bar).toHaveAttribute('aria-valuetext', /Counting tokens|Storing|Reading/);
  await letGo();
  await expect(page.getByText('large.txt — ')).toBeVisible({ timeout: 180_000 });
  await expect(bar).toHaveCount(0);
});

test('the 234-page Pride and Prejudice PDF imports in the worker and chunks say where they are', async ({ page }) => {
  await page.goto('/');
  const pdf = readFileSync(new URL('../../shared/corpus/pride-and-prejudice.pdf', import.meta.url));
  // Every text the import's bar shows, recorded in the page as it changes: a stage is seen however quickly it passes.
  await page.evaluate(() => {
    const texts: string[] = [];
    (window as unknown as { importTexts: string[] }).importTexts = texts;
    new MutationObserver(() => {
      const text = document.querySelector('[role="progressbar"][aria-label="Import progress"]')?.getAttribute('aria-valuetext');
      if (text && texts.at(-1) !== text) texts.push(text);
    }).observe(document.body, { subtree: true, childList: true, attributes: true, characterData: true });
  });
  const started = Date.now();
  await addDocument(page, { name: 'pride-and-prejudice.pdf', mimeType: 'application/pdf', buffer: pdf });
  await expect(page.getByText('pride-and-prejudice.pdf — ')).toBeVisible({ timeout: 60_000 });
  expect(await page.evaluate(() => (window as unknown as { importTexts: string[] }).importTexts)).toContainEqual(expect.stringMatching(/Reading pages/));
  test.info().annotations.push({ type: 'import', description: `234-page PDF imported in ${Date.now() - started} ms` });
  await openPlace(page, 'Library');
  const entry = page.getByRole('region', { name: 'Library' }).getByRole('listitem', { name: 'pride-and-prejudice.pdf' });
  await expect(entry).toContainText('234 pages');
  await expect(entry).toContainText(/Project Gutenberg header \(.*\) and licence/);
  await openPlace(page, 'Read');

  await page.getByLabel('Question').fill('Who wrote to Mr. Collins about the living at Hunsford?');
  await page.getByRole('button', { name: 'Read' }).click();
  const progress = page.getByRole('progressbar', { name: 'Reading progress' });
  await expect.poll(async () => Number(await progress.getAttribute('aria-valuenow')), { timeout: 60_000 }).toBeGreaterThan(3);
  // The newest section says which chapter and page it starts in.
  await expect(page.getByRole('region', { name: 'Section' })).toContainText(/Section \d+ of \d+ · Chapter \d+, p\. \d+/);
  // So does its entry in the timeline, with the chapter it ends in where that is another (selected, so the virtual list shows it however far the run has got).
  await page.getByRole('slider', { name: 'Revision' }).fill('3');
  await expect(
    page
      .getByRole('list', { name: 'Memory revisions' })
      .getByRole('listitem', { name: /^Revision 3: chunk 3 of \d+, \d+% through the book, Chapter \d+, p\. \d+( – Chapter \d+)?,/ }),
  ).toBeVisible();
});
