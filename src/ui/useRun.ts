import { useEffect, useRef, useState } from 'react';
import { type DocumentRecord, type RevisionRecord, type RunRecord, store } from './data';
import { type HeardStop, heardStop, StoredView, withHeardStop } from './stored-view';
import { onRunEvent } from './client';

export interface RunView {
  run: RunRecord | null;
  revisions: RevisionRecord[];
  /** The run's book as this browser stores it (its sections are read from storage when shown), or null; a set's first book. */
  book: DocumentRecord | null;
  /** A run over a set: each of its books as this browser stores it, in reading order, null where it has none; empty for one book. */
  books: (DocumentRecord | null)[];
  /** The memory being written right now, as far as it has come. */
  writing: { index: number; text: string } | null;
}

const EMPTY: RunView = { run: null, revisions: [], book: null, books: [], writing: null };

/**
 * A run as storage holds it, kept current by the worker's events. Events only
 * say that something changed; what changed is read back from storage, in
 * batches, so a burst of fast revisions costs a few reads.
 */
export function useRun(runId: string | null, libraryVersion = 0): RunView {
  const [view, setView] = useState<RunView>(EMPTY);
  /** Reads the run's books again: one added to the Library may be one it lacked. */
  const booksAgain = useRef<() => void>(() => undefined);
  // No run: nothing shown. Another run: the one shown stays until the new one is read, without the memory it was writing.
  const [viewRunId, setViewRunId] = useState(runId);
  if (viewRunId !== runId) {
    setViewRunId(runId);
    setView((v) => (runId ? { ...v, writing: null } : EMPTY));
  }

  useEffect(() => {
    if (!runId) return;
    let revisions: RevisionRecord[] = [];
    let book: DocumentRecord | null = null;
    let books: (DocumentRecord | null)[] = [];
    let bookChanged = false;
    let stopped: HeardStop | null = null;
    let bookIds = new Set<string>();

    const view = new StoredView(async () => {
      let run: RunRecord | null;
      try {
        const s = await store;
        run = withHeardStop((await s.getRun(runId)) ?? null, stopped);
        const fresh = await s.listRevisionsFrom(runId, revisions.length);
        if (run && (book === null || bookChanged)) {
          bookChanged = false;
          book = (await s.getDocument(run.documentId)) ?? null;
          books = run.books ? await Promise.all(run.books.map(async (b) => (await s.getDocument(b.documentId)) ?? null)) : [];
          bookIds = new Set(run.books?.map((b) => b.documentId) ?? [run.documentId]);
        }
        if (fresh.length) revisions = [...revisions, ...fresh];
      } catch {
        return; // storage out of reach (the page says so); the next event tries again
      }
      if (view.open) setView((v) => ({ run, revisions, book, books, writing: v.writing && v.writing.index >= revisions.length ? v.writing : null }));
    });

    const unsubscribe = onRunEvent((event) => {
      if (event.type === 'document') {
        // A book's record changed: its import finished, or it was removed (or, of a set's books, added again).
        if (event.documentId !== book?.id && !bookIds.has(event.documentId)) return;
        bookChanged = true;
      } else if (event.type === 'control' || event.type === 'collection' || event.runId !== runId) {
        return;
      } else if (event.type === 'writing') {
        const { index, text: written } = event;
        return setView((v) => ({ ...v, writing: { index, text: written } }));
      } else if (event.type === 'status') {
        stopped = heardStop(event);
      }
      view.soon();
    });
    booksAgain.current = () => {
      bookChanged = true;
      view.soon();
    };
    void view.refresh();
    return () => {
      view.close();
      unsubscribe();
    };
  }, [runId]);

  useEffect(() => booksAgain.current(), [libraryVersion]);

  return view;
}
