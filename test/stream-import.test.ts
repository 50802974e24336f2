import 'fake-indexeddb/auto';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { chunkAll, firstChunk } from '../src/core/chunker';
import { decodeText } from '../src/ingest/text';
import { Utf8TextStream } from '../src/ingest/text-stream';
import type { DocumentRecord } from '../src/storage/db';
import { buildExport } from '../src/storage/export';
import { dumpDatabase } from './support/db-dump';
import { FakeLocks, freshDbName, killTab, NEEDLE, openTab, qwen, request, type Tab } from './durability-setup';
import { corpusText } from './helpers';

/** Texts from 1 MB are read as a stream here (4 MB in the app): books of a few parts, read in a few seconds. */
const STREAM = { streamBytes: { min: 1_000_000, max: 64 * 1024 * 1024 } };

const encode = (text: string) => new TextEncoder().encode(text) as Uint8Array<ArrayBuffer>;

/** Frankenstein as Project Gutenberg ships it (BOM, CRLF, curly quotes), its body three times between one header and one footer. */
function gutenbergBook(): string {
  const raw = readFileSync(new URL('../../shared/corpus/frankenstein.txt', import.meta.url), 'utf8');
  const start = raw.indexOf('\n', raw.indexOf('*** START OF')) + 1;
  const end = raw.indexOf('*** END OF');
  const body = raw.slice(start, end);
  return raw.slice(0, start) + body + body.replace('Letter 1', `Letter 1\r\n\r\n${NEEDLE}`) + body + raw.slice(end);
}

/** A Markdown book with headings, accents written as combining marks (NFC composes them), Chinese and lone CR line ends. */
function markdownBook(): string {
  const parts: string[] = ['# The Harbour Book\n\n'];
  for (let i = 0; parts.join('').length < 1_300_000; i++) {
    parts.push(
      `## Part ${i}\n\n`,
      `The cafe\u0301 by the quay opened at ${i % 12} o’clock;\rthe nets were mended there. 港口的灯塔在雾中亮着。\r\n\r\n`.repeat(40),
    );
  }
  return parts.join('');
}

/** The same file imported as a stream in one app, and whole in another. */
async function importBoth(name: string, bytes: Uint8Array<ArrayBuffer>, stripGutenberg = true) {
  const dbName = freshDbName('streamed');
  const streamed = await openTab(dbName, { deps: STREAM });
  const whole = await openTab(freshDbName('whole'));
  const a = await streamed.library.ingestFile(new File([bytes], name), 'extractive', { stripGutenberg });
  const b = await whole.library.ingest(name, bytes.slice(), 'extractive', { stripGutenberg });
  return { streamed, whole, a, b, dbName };
}

async function counts(dbName: string): Promise<Record<string, number>> {
  const dump = await dumpDatabase(dbName);
  return Object.fromEntries(Object.entries(dump.stores).map(([name, s]) => [name, s.records.length]));
}

describe('decoding a text file slice by slice', () => {
  it('makes exactly the text that decoding it whole makes, wherever the slices are cut', () => {
    const text =
      '\uFEFFOne line\r\nand a CR line\rand then e\u0301 and a\u0308 composed, 中文，以及 emoji 🌊🐚.\r\n\r\n' +
      'Split: \r\n\r\ncafe\u0301\r\u0301 a mark after a line end.\n';
    const bytes = encode(text.repeat(7));
    const whole = decodeText(bytes.slice(), 'book.txt').text;
    for (let seed = 1; seed <= 200; seed++) {
      const stream = new Utf8TextStream();
      let out = '';
      let x = seed;
      for (let at = 0; at < bytes.length;) {
        x = (x * 1103515245 + 12345) % 2 ** 31;
        const next = Math.min(bytes.length, at + 1 + (x % 9));
        out += stream.push(bytes.subarray(at, next), next === bytes.length);
        at = next;
      }
      expect(out).toBe(whole);
    }
  });
});

describe('the first chunk of a book known only from its beginning', () => {
  it('is the first chunk of the whole text, or not given', async () => {
    const tokenizer = await qwen();
    const english = corpusText('frankenstein.txt');
    const chinese = '港口的灯塔在雾中亮着，渔船一只接一只地回来了。她站在码头上，数着桅杆。\n\n'.repeat(4000);
    for (const text of [english, chinese]) {
      for (const tokens of [500, 2000, 5000]) {
        const expected = chunkAll(text.slice(0, 400_000), tokenizer, tokens)[0];
        let given = 0;
        for (const length of [1000, tokens * 4, tokens * 6, tokens * 12, 200_000]) {
          const first = firstChunk(text.slice(0, length), tokenizer, tokens);
          if (first) given++;
          if (first) expect(first).toEqual(expected);
        }
        expect(given).toBeGreaterThan(0);
      }
    }
  });
});

describe('importing a text file as a stream', () => {
  it('stores exactly the text, anchors and Gutenberg cut that reading it whole stores', async () => {
    const cases: [string, string, boolean][] = [
      ['frankenstein.txt', gutenbergBook(), true],
      ['frankenstein.txt', gutenbergBook(), false],
      ['harbour.md', markdownBook(), true],
    ];
    for (const [name, text, strip] of cases) {
      const { streamed, whole, a, b, dbName } = await importBoth(name, encode(text), strip);
      expect(a.id).toMatch(/^text-/);
      expect(a.sha256).toBe(b.id);
      for (const key of ['name', 'bytes', 'encoding', 'chars', 'tokens', 'tokensEstimated', 'format', 'stripped', 'partChars'] as const) {
        expect([name, strip, key, a[key]]).toEqual([name, strip, key, b[key]]);
      }
      expect(a.importing).toBeUndefined();
      expect(await streamed.store.readText(a.id)).toBe(await whole.store.readText(b.id));
      expect(await streamed.store.getStripped(a.id)).toEqual(await whole.store.getStripped(b.id));
      const anchors = await streamed.store.getAnchors(a.id);
      expect(anchors.length).toBeGreaterThan(20);
      expect(anchors).toEqual(await whole.store.getAnchors(b.id));
      expect((await counts(dbName)).textParts).toBe(Math.ceil(a.chars / a.partChars));
      if (strip && name.endsWith('.txt')) expect(a.stripped).toBeDefined();
      streamed.store.close();
      whole.store.close();
    }
  });

  it('reads whole a file that is not UTF-8 past its beginning, leaving one document', async () => {
    // A Windows-1252 file: ASCII for its first megabyte, then an "é" as the single byte 0xE9.
    const ascii = encode('The harbour was quiet that night.\n'.repeat(40_000));
    const bytes = new Uint8Array(ascii.length + 20) as Uint8Array<ArrayBuffer>;
    bytes.set(ascii);
    bytes.set([0x63, 0x61, 0x66, 0xe9, 0x0a], ascii.length);
    bytes.fill(0x2e, ascii.length + 5);
    const dbName = freshDbName('latin');
    const tab = await openTab(dbName, { deps: STREAM });
    const usable: DocumentRecord[] = [];
    const doc = await tab.library.ingestFile(new File([bytes], 'latin.txt'), 'extractive', { onUsable: (d) => usable.push(d) });
    expect(doc.encoding).toBe('windows-1252');
    expect(doc.id).toMatch(/^[0-9a-f]{64}$/);
    expect((await tab.store.readText(doc.id))!.slice(ascii.length, ascii.length + 5)).toBe('café\n');
    expect((await tab.store.listDocuments()).map((d) => d.id)).toEqual([doc.id]);
    expect((await counts(dbName)).textParts).toBe(Math.ceil(doc.chars / doc.partChars));
    // It was readable as a stream first; that document is gone with the stream.
    expect(usable[0]!.id).toMatch(/^text-/);
    tab.store.close();
  });

  it('reads whole a text that starts with blank space and has no START marker', async () => {
    const text = `\n\n${corpusText('frankenstein.txt').slice(5000, 400_000)}`.repeat(3);
    const { streamed, a, b } = await importBoth('blank.txt', encode(text));
    expect(a.id).toBe(b.id);
    expect(await streamed.store.readText(a.id)).toBe(text);
    streamed.store.close();
  });

  it('knows the same file added again, and tells another file of the same size from it', async () => {
    const tab = await openTab(freshDbName('again'), { deps: STREAM });
    const text = gutenbergBook();
    const first = await tab.library.ingestFile(new File([encode(text)], 'a.txt'), 'extractive');
    const again = await tab.library.ingestFile(new File([encode(text)], 'b.txt'), 'extractive');
    expect(again.id).toBe(first.id);
    const other = await tab.library.ingestFile(new File([encode(text.replace('Walton', 'Waltor'))], 'c.txt'), 'extractive');
    expect(other.id).not.toBe(first.id);
    expect(await tab.store.listDocuments()).toHaveLength(2);
    tab.store.close();
  });

  it('lets a read start from the beginning while the rest arrives, and reads the book as its whole text cuts it', async () => {
    const tab = await openTab(freshDbName('arriving'), { deps: STREAM });
    const tokenizer = await qwen();
    let runId: Promise<string> | undefined;
    let doc: DocumentRecord | undefined;
    const arrivingAtFirstStep: boolean[] = [];
    const generate = tab.engine.generate.bind(tab.engine);
    tab.engine.generate = (messages, options) => {
      if (arrivingAtFirstStep.length === 0) arrivingAtFirstStep.push(tab.library.arriving(doc!.id) !== undefined);
      return generate(messages, options);
    };
    const stored = await tab.library.ingestFile(new File([encode(gutenbergBook())], 'frankenstein.txt'), 'extractive', {
      onUsable: (d) => {
        doc = d;
        runId = tab.runner.start(request(d.id, { chunkTokens: 4000 }));
      },
    });
    expect(doc!.importing).toBe(true);
    const id = await runId!;
    await tab.log.status(id, 'done');
    // The first step began while the text was still arriving.
    expect(arrivingAtFirstStep).toEqual([true]);
    const run = (await tab.store.getRun(id))!;
    const text = (await tab.store.readText(stored.id))!;
    const expected = chunkAll(text, tokenizer, run.settings.chunkTokens).map(({ start, end, tokens }) => ({ start, end, tokens }));
    expect(run.chunks.map(({ start, end, tokens }) => ({ start, end, tokens }))).toEqual(expected);
    const revisions = await tab.store.listRevisions(id);
    expect(revisions.map(({ start, end }) => ({ start, end }))).toEqual(expected.map(({ start, end }) => ({ start, end })));
    expect(run.answer).toContain('4829137');
    tab.store.close();
  });

  it('after a crash in the middle of a stream, removes the book and its read when the app opens again', async () => {
    const dbName = freshDbName('stream-crash');
    const locks = new FakeLocks();
    const tab: Tab = await openTab(dbName, { name: 'a', locks, deps: STREAM });
    let usable: DocumentRecord | undefined;
    let killed!: () => void;
    const dead = new Promise<void>((resolve) => (killed = resolve));
    const importing = tab.library
      .ingestFile(new File([encode(gutenbergBook())], 'frankenstein.txt'), 'extractive', {
        onUsable: (d) => {
          usable = d;
          // The tab dies as soon as the read is stored, with most of the text still to be written.
          void tab.runner.start(request(d.id, { chunkTokens: 4000 })).then(() => {
            killTab(tab, locks);
            killed();
          });
        },
      })
      .catch(() => 'the tab is gone');
    await dead;
    expect(await importing).toBe('the tab is gone');
    const left = await counts(dbName);
    expect(left).toMatchObject({ documents: 1, runs: 1 });
    expect(left.textParts).toBeLessThan(Math.ceil(usable!.chars / usable!.partChars));

    const reopened = await openTab(dbName, { name: 'b', locks, deps: STREAM });
    expect(await reopened.library.recoverImports()).toBe(1);
    expect(await counts(dbName)).toMatchObject({ documents: 0, textParts: 0, runs: 0, runChunks: 0, revisions: 0, memories: 0 });
    reopened.store.close();
  });

  it('gives a run exported from one browser the same book in another, which has an id of its own there', async () => {
    const bytes = encode(gutenbergBook());
    const a = await openTab(freshDbName('export-a'), { deps: STREAM });
    const docA = await a.library.ingestFile(new File([bytes], 'frankenstein.txt'), 'extractive');
    const runId = await a.runner.start(request(docA.id, { chunkTokens: 20_000 }));
    await a.log.status(runId, 'done');
    const exported = buildExport({
      run: (await a.store.getRun(runId))!,
      revisions: await a.store.listRevisions(runId),
      memories: await a.store.listMemories(runId),
      documentSha256: docA.sha256,
    });
    const b = await openTab(freshDbName('export-b'), { deps: STREAM });
    const docB = await b.library.ingestFile(new File([bytes], 'frankenstein.txt'), 'extractive');
    expect(docB.id).not.toBe(docA.id);
    const imported = await b.runner.importRun(JSON.stringify(exported));
    expect((await b.store.getRun(imported))!.documentId).toBe(docB.id);
    a.store.close();
    b.store.close();
  });
});
