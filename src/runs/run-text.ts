import type { Library } from '../library/library';
import type { RunProgress, Store } from '../storage/db';
import { setText } from './book-set';

/** The whole text of a run's book, or of its set joined, as stored here; undefined where it is not (any more). */
export async function storedRunText(store: Store, library: Library, run: Pick<RunProgress, 'documentId' | 'books'>): Promise<string | undefined> {
  if (run.books) return setText(store, library, run.books);
  // The one most recently imported or read is at hand; another is read from storage.
  const text = await library.text(run.documentId);
  if (text !== undefined) return text;
  const doc = await store.getDocument(run.documentId);
  return doc && (await library.bookText(doc));
}
