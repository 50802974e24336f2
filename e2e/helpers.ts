import { readFileSync } from 'node:fs';
import type { Page } from '@playwright/test';

export const CORPUS = new URL('../../shared/corpus/', import.meta.url);

export const PLANTED = {
  sentence: 'The vault code for the Marlowe archive is 4829137.',
  question: 'What is the vault code for the Marlowe archive?',
  code: '4829137',
};

/**
 * Frankenstein as its real bytes (BOM, CRLF) with one sentence planted as its own
 * paragraph at the first paragraph break after `fraction` of the book.
 */
export function plantedBook(fraction = 0.6, sentence = PLANTED.sentence): Buffer {
  const original = readFileSync(new URL('frankenstein.txt', CORPUS)).toString('latin1');
  const at = original.indexOf('\r\n\r\n', Math.floor(original.length * fraction));
  const planted = original.slice(0, at) + `\r\n\r\n${sentence}` + original.slice(at);
  return Buffer.from(planted, 'latin1'); // latin1 both ways keeps the UTF-8 bytes as they are
}

/** Counts the records of each IndexedDB store, read in the page itself. */
export function storedCounts(page: Page): Promise<Record<string, number>> {
  return page.evaluate(
    () =>
      new Promise<Record<string, number>>((resolve, reject) => {
        const open = indexedDB.open('memagent');
        open.onerror = () => reject(open.error);
        open.onsuccess = () => {
          const db = open.result;
          const names = [...db.objectStoreNames];
          if (names.length === 0) return resolve({});
          const tx = db.transaction(names, 'readonly');
          const counts: Record<string, number> = {};
          for (const name of names) {
            const req = tx.objectStore(name).count();
            req.onsuccess = () => (counts[name] = req.result);
          }
          tx.oncomplete = () => {
            db.close();
            resolve(counts);
          };
        };
      }),
  );
}

/** The k of every "Revision k" entry in the revisions list, in list order. */
export async function revisionNumbers(page: Page): Promise<number[]> {
  const labels = await page
    .getByRole('list', { name: 'Memory revisions' })
    .getByRole('listitem')
    .evaluateAll((items) => items.map((li) => li.getAttribute('aria-label') ?? ''));
  return labels.map((l) => Number(/^Revision (\d+)\b/.exec(l)?.[1] ?? NaN));
}
