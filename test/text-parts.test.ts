import 'fake-indexeddb/auto';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { cutParts, partCount, partsCovering, sliceParts } from '../src/core/text-parts';
import { DocumentGoneError, type DocumentRecord, Store } from '../src/storage/db';
import { freshDbName } from './durability-setup';

const stores: Store[] = [];
afterEach(() => stores.splice(0).forEach((s) => s.close()));

async function openStore(): Promise<Store> {
  const store = await Store.open(freshDbName('parts'));
  stores.push(store);
  return store;
}

function record(text: string, id = 'doc'): Omit<DocumentRecord, 'partChars' | 'importing'> {
  return { id, name: `${id}.txt`, bytes: text.length, encoding: 'UTF-8', chars: text.length, tokens: 1, addedAt: 0 };
}

/** Text with astral characters (surrogate pairs) and CJK, so that part boundaries fall inside pairs too. */
const textArb = fc.array(fc.constantFrom('a', ' ', '\n', 'é', '’', '马', '🌊', '𝒳'), { minLength: 0, maxLength: 300 }).map((a) => a.join(''));

describe('text in parts', () => {
  it('reads any range across parts exactly as a slice of the whole text', () => {
    fc.assert(
      fc.property(textArb, fc.integer({ min: 1, max: 40 }), fc.nat(), fc.nat(), (text, partChars, a, b) => {
        const parts = [...cutParts(text, partChars)];
        expect(parts.join('')).toBe(text);
        expect(parts.length).toBe(partCount(text.length, partChars));
        const start = text.length ? a % (text.length + 1) : 0;
        const end = start + (text.length ? b % (text.length - start + 1) : 0);
        const { first, last } = partsCovering(start, end, partChars);
        expect(sliceParts({ parts: parts.slice(first, last + 1), first, partChars }, start, end)).toBe(text.slice(start, end));
      }),
      { numRuns: 500 },
    );
  });

  it('refuses to make up a range from parts it was not given', () => {
    expect(() => sliceParts({ parts: ['abc'], first: 0, partChars: 3 }, 1, 5)).toThrow(/part 1 is missing/);
  });

  it('commits the document with its first part first, then the rest, and reads any range back', async () => {
    const store = await openStore();
    const text = 'The archive’s ledger 🌊 lay open. '.repeat(400); // 13,200 characters
    const seen: { usable?: DocumentRecord; whole?: string; first?: string; progress: number[] } = { progress: [] };
    const checks: Promise<void>[] = [];
    const stored = await store.storeDocument(
      record(text),
      text,
      { header: 'HEADER', footer: 'FOOTER' },
      {
        partChars: 1000,
        batchChars: 3000,
        onUsable: (doc) => {
          seen.usable = doc;
          // At this moment only the first part is stored: its range reads, the whole text does not yet.
          checks.push(
            (async () => {
              seen.first = await store.readText('doc', 0, 1000);
              seen.whole = await store.readText('doc');
            })(),
          );
        },
        onProgress: (f) => seen.progress.push(f),
      },
    );
    await Promise.all(checks);
    expect(seen.usable).toMatchObject({ id: 'doc', partChars: 1000, importing: true });
    expect(seen.first).toBe(text.slice(0, 1000));
    expect(seen.whole).toBeUndefined();
    // 14 parts: the first alone, then batches of 3.
    expect(seen.progress).toEqual([1, 4, 7, 10, 13, 14].map((n) => n / 14));
    expect(stored).toMatchObject({ id: 'doc', chars: text.length, partChars: 1000 });
    expect(stored.importing).toBeUndefined();
    expect(await store.getDocument('doc')).toEqual(stored);
    expect(await store.readText('doc')).toBe(text);
    for (const [a, b] of [
      [0, 1],
      [999, 1001],
      [2500, 7777],
      [12_999, 13_200],
      [13_100, 99_999],
      [5, 5],
    ]) {
      expect(await store.readText('doc', a, b)).toBe(text.slice(a, b));
    }
    expect(await store.getStripped('doc')).toEqual({ header: 'HEADER', footer: 'FOOTER' });
  });

  it('stores a short text in one transaction, usable and whole at once', async () => {
    const store = await openStore();
    const stored = await store.storeDocument(record('A short book.'), 'A short book.');
    expect(stored.importing).toBeUndefined();
    expect(await store.readText('doc')).toBe('A short book.');
  });

  it('keeps the document already stored under the same id', async () => {
    const store = await openStore();
    const first = await store.storeDocument(record('first'), 'first');
    expect(await store.storeDocument({ ...record('second'), name: 'other.txt' }, 'second')).toEqual(first);
    expect(await store.readText('doc')).toBe('first');
  });

  it('writes no more parts of a document deleted while it is stored, and leaves nothing of it', async () => {
    const store = await openStore();
    const text = 'x'.repeat(10_000);
    const storing = store.storeDocument(record(text), text, undefined, {
      partChars: 1000,
      batchChars: 1000,
      onUsable: () => void store.deleteDocument('doc'),
    });
    await expect(storing).rejects.toBeInstanceOf(DocumentGoneError);
    expect(await store.getDocument('doc')).toBeUndefined();
    expect(await store.readText('doc', 0, 10)).toBeUndefined();
    expect(await store.getStripped('doc')).toBeUndefined();
  });
});
