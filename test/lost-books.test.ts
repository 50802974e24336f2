import { beforeEach, describe, expect, it, vi } from 'vitest';
import type { DocumentRecord } from '../src/ui/data';

const book = (id: string, importing = false) => ({ id, importing }) as unknown as DocumentRecord;

function fakeLocalStorage(): Map<string, string> {
  const values = new Map<string, string>();
  vi.stubGlobal('localStorage', {
    getItem: (k: string) => values.get(k) ?? null,
    setItem: (k: string, v: string) => values.set(k, v),
    removeItem: (k: string) => values.delete(k),
  });
  return values;
}

/** A fresh module each time: "first listing of the page" is module state, as a reload resets it. */
async function page() {
  vi.resetModules();
  return import('../src/ui/lost-books');
}

describe('lost books', () => {
  beforeEach(() => {
    fakeLocalStorage();
  });

  it('an empty first listing after books were held says they are lost, until dismissed', async () => {
    let tab = await page();
    tab.noteLibrary([book('a')]);
    tab = await page();
    tab.noteLibrary([]);
    expect(tab.booksLost()).toBe(true);
    tab = await page();
    tab.noteLibrary([]);
    expect(tab.booksLost()).toBe(true);
    tab.dismissLostBooks();
    tab = await page();
    tab.noteLibrary([]);
    expect(tab.booksLost()).toBe(false);
  });

  it('deleting the last book clears the mark at once, so a reload before the next listing is no loss', async () => {
    let tab = await page();
    const docs = [book('a'), book('b', true)];
    tab.noteLibrary(docs);
    tab.noteDeleting('a', docs);
    tab = await page(); // reloaded before the page listed the library again
    tab.noteLibrary([]);
    expect(tab.booksLost()).toBe(false);
  });

  it('deleting one of two books keeps the mark', async () => {
    let tab = await page();
    const docs = [book('a'), book('b')];
    tab.noteLibrary(docs);
    tab.noteDeleting('a', docs);
    tab = await page();
    tab.noteLibrary([]);
    expect(tab.booksLost()).toBe(true);
  });
});
