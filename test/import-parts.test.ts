import 'fake-indexeddb/auto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DocumentRecord } from '../src/storage/db';
import { dumpDatabase } from './support/db-dump';
import { FakeLocks, freshDbName, killTab, NEEDLE, openTab, request } from './durability-setup';
import { corpusText } from './helpers';
import { QuotaFault } from './storage-faults';

/** Parts of 1,000 characters written one per transaction: a long import, made of many steps, for a small book. */
const SMALL_PARTS = { textStorage: { partChars: 1000, batchChars: 1000 } };

let fault: QuotaFault;
let book: Uint8Array<ArrayBuffer>;
beforeAll(async () => {
  fault = await QuotaFault.install();
  // ~120K characters of Frankenstein with the planted sentence near its end: 120 parts.
  const text = corpusText('frankenstein.txt').slice(100_000, 220_000);
  const at = text.indexOf('. ', 110_000) + 2;
  book = new TextEncoder().encode(`${text.slice(0, at)}${NEEDLE} ${text.slice(at)}`);
});
afterAll(() => fault.uninstall());

/** How many records each store holds, read past the Store. */
async function counts(dbName: string): Promise<Record<string, number>> {
  const dump = await dumpDatabase(dbName);
  return Object.fromEntries(Object.entries(dump.stores).map(([name, s]) => [name, s.records.length]));
}

describe('importing a book in parts', () => {
  it('lets a read start once the first part is stored, while the rest is written', async () => {
    const dbName = freshDbName('usable');
    const tab = await openTab(dbName, { deps: SMALL_PARTS });
    const order: string[] = [];
    let runId: Promise<string> | undefined;
    tab.log.onEvent = (e) => {
      if (e.type === 'revision' && e.index === 0) order.push('first step');
    };
    const doc = await tab.library.ingest('book.txt', book, 'extractive', {
      onUsable: (d) => {
        order.push('usable');
        runId = tab.runner.start(request(d.id));
      },
    });
    order.push('stored');
    expect(order.slice(0, 2)).toEqual(['usable', 'first step']);
    expect(doc.importing).toBeUndefined();
    const id = await runId!;
    await tab.log.status(id, 'done');
    expect((await tab.store.getRun(id))!.answer).toContain('4829137');
    expect(await tab.store.readText(doc.id)).toBe(new TextDecoder().decode(book));
    tab.store.close();
  });

  it('removes the book and the read started on it when storing fails part-way, and says so in words', async () => {
    const dbName = freshDbName('fails');
    const tab = await openTab(dbName, { deps: SMALL_PARTS });
    let started: Promise<string> | undefined;
    const importing = tab.library.ingest('book.txt', book, 'extractive', {
      onUsable: (d) => {
        started = tab.runner.start(request(d.id));
        fault.fill({ stores: ['textParts'], allowed: 30 });
      },
    });
    await expect(importing).rejects.toThrow(
      /^"book\.txt" does not fit in this browser's storage\. Delete documents .* then add it again\. Nothing of it was kept, and the read started on it was removed\.$/,
    );
    fault.free();
    await started;
    expect(await tab.store.listDocuments()).toEqual([]);
    expect(await tab.store.listRuns()).toEqual([]);
    expect(await counts(dbName)).toMatchObject({ documents: 0, textParts: 0, runs: 0, runChunks: 0 });
    tab.store.close();
  });

  it('translates every kind of storage failure and stores nothing of the book', async () => {
    const failures: [DOMException, RegExp][] = [
      [new DOMException('The quota has been exceeded.', 'QuotaExceededError'), /^"book\.txt" does not fit in this browser's storage\./],
      [
        new DOMException('The serialized keys and/or value are too large (size=206565940 bytes, max=133169152 bytes).', 'UnknownError'),
        /^"book\.txt" is larger than this browser lets a site store in one piece, so it was not saved and nothing was changed\. Split the book/,
      ],
      [
        new DOMException('The database connection is closing.', 'InvalidStateError'),
        /^The browser closed this site's database .* so "book\.txt" could not be saved\. Reload the page/,
      ],
      [
        new DOMException('Internal error committing transaction.', 'UnknownError'),
        /^This browser's database failed, so "book\.txt" could not be saved .* Reload the page and try again/,
      ],
    ];
    for (const [error, message] of failures) {
      const dbName = freshDbName('translated');
      const tab = await openTab(dbName, { deps: SMALL_PARTS });
      fault.fill({ stores: ['documents'], error: () => error });
      const failure = await tab.library.ingest('book.txt', book, 'extractive').catch((e: Error) => e);
      fault.free();
      expect((failure as Error).message).toMatch(message);
      expect((failure as Error).message).not.toContain(error.message);
      expect(await counts(dbName)).toMatchObject({ documents: 0, textParts: 0 });
      tab.store.close();
    }
  });

  it('after a crash in the middle of an import, removes the book and its runs when the app opens again', async () => {
    const dbName = freshDbName('crash');
    const locks = new FakeLocks();
    const tab = await openTab(dbName, { name: 'a', locks, deps: SMALL_PARTS });
    let usable: DocumentRecord | undefined;
    let killed!: () => void;
    const dead = new Promise<void>((resolve) => (killed = resolve));
    const importing = tab.library
      .ingest('book.txt', book, 'extractive', {
        onUsable: (d) => {
          usable = d;
          // The tab dies as soon as the read is stored, with most of the text still to be written.
          void tab.runner.start(request(d.id)).then(() => {
            killTab(tab, locks);
            killed();
          });
        },
      })
      .catch(() => 'the tab is gone');
    await dead;
    expect(await importing).toBe('the tab is gone');
    const left = await counts(dbName);
    expect(left.documents).toBe(1);
    expect(left.runs).toBe(1);
    expect(left.textParts).toBeGreaterThan(0);
    expect(left.textParts).toBeLessThan(usable!.chars / 1000);

    const reopened = await openTab(dbName, { name: 'b', locks });
    expect(await reopened.library.recoverImports()).toBe(1);
    expect(await counts(dbName)).toMatchObject({ documents: 0, textParts: 0, runs: 0, runChunks: 0, revisions: 0, memories: 0 });
    expect(reopened.log.events).toContainEqual({ type: 'document', documentId: usable!.id });
    // The same file imports afresh, whole.
    const again = await reopened.library.ingest('book.txt', book, 'extractive');
    expect(await reopened.store.readText(again.id)).toBe(new TextDecoder().decode(book));
    reopened.store.close();
  });

  it('leaves alone an import that another tab is still writing, and waits for it to read the same file', async () => {
    const dbName = freshDbName('two-tabs');
    const locks = new FakeLocks();
    const a = await openTab(dbName, { name: 'a', locks, deps: SMALL_PARTS });
    const b = await openTab(dbName, { name: 'b', locks });
    let fromB: Promise<DocumentRecord> | undefined;
    let recovered: Promise<number> | undefined;
    const fromA = a.library.ingest('book.txt', book, 'extractive', {
      onUsable: () => {
        recovered = b.library.recoverImports();
        fromB = b.library.ingest('copy.txt', book, 'extractive');
      },
    });
    const doc = await fromA;
    expect(await recovered).toBe(0);
    expect(await fromB).toEqual(doc);
    expect(await b.store.readText(doc.id)).toBe(new TextDecoder().decode(book));
    a.store.close();
    b.store.close();
  });

  it('asks to wait for a book another tab is still storing before reading it', async () => {
    const dbName = freshDbName('wait');
    const locks = new FakeLocks();
    const a = await openTab(dbName, { name: 'a', locks, deps: SMALL_PARTS });
    const b = await openTab(dbName, { name: 'b', locks });
    let refusal: Promise<unknown> | undefined;
    await a.library.ingest('book.txt', book, 'extractive', {
      onUsable: (d) => {
        refusal = b.runner.start(request(d.id)).catch((e: Error) => e.message);
      },
    });
    expect(await refusal).toMatch(/^"book\.txt" is still being stored by another tab\. Wait until its import has finished, then try again\.$/);
    a.store.close();
    b.store.close();
  });
});
