import { useEffect, useState } from 'react';
import { type DocumentRecord, type RevisionRecord, type RunRecord, type RunStatus, store } from './data';
import { onRunEvent } from './client';

export interface RunView {
  run: RunRecord | null;
  revisions: RevisionRecord[];
  /** The run's book as this browser stores it (its sections are read from storage when shown), or null. */
  book: DocumentRecord | null;
  /** The memory being written right now, as far as it has come. */
  writing: { index: number; text: string } | null;
}

const EMPTY: RunView = { run: null, revisions: [], book: null, writing: null };

/**
 * A run as storage holds it, kept current by the worker's events. Events only
 * say that something changed; what changed is read back from storage, in
 * batches, so a burst of fast revisions costs a few reads.
 */
export function useRun(runId: string | null): RunView {
  const [view, setView] = useState<RunView>(EMPTY);
  // No run: nothing shown. Another run: the one shown stays until the new one is read, without the memory it was writing.
  const [viewRunId, setViewRunId] = useState(runId);
  if (viewRunId !== runId) {
    setViewRunId(runId);
    setView((v) => (runId ? { ...v, writing: null } : EMPTY));
  }

  useEffect(() => {
    if (!runId) return;
    let alive = true;
    let revisions: RevisionRecord[] = [];
    let book: DocumentRecord | null = null;
    let bookChanged = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let loading = false;
    let again = false;
    // A stop whose own write did not fit (storage full) is known only from its event; shown until storage moves on.
    let stopped: { status: RunStatus; error: string } | null = null;

    const refresh = async () => {
      if (loading) {
        again = true;
        return;
      }
      loading = true;
      let run: RunRecord | null;
      try {
        const s = await store;
        const stored = (await s.getRun(runId)) ?? null;
        run = stored && stopped && stored.status === 'running' ? { ...stored, ...stopped } : stored;
        const fresh = await s.listRevisionsFrom(runId, revisions.length);
        if (run && (book === null || bookChanged)) {
          bookChanged = false;
          book = (await s.getDocument(run.documentId)) ?? null;
        }
        if (fresh.length) revisions = [...revisions, ...fresh];
      } catch {
        return; // storage out of reach (the page says so); the next event tries again
      } finally {
        loading = false;
      }
      if (alive) setView((v) => ({ run, revisions, book, writing: v.writing && v.writing.index >= revisions.length ? v.writing : null }));
      if (again && alive) {
        again = false;
        void refresh();
      }
    };

    const unsubscribe = onRunEvent((event) => {
      if (event.type === 'document') {
        // The book's record changed: its import finished, or it was removed.
        if (event.documentId !== book?.id) return;
        bookChanged = true;
      } else if (event.type === 'control' || event.runId !== runId) {
        return;
      } else if (event.type === 'writing') {
        const { index, text: written } = event;
        return setView((v) => ({ ...v, writing: { index, text: written } }));
      } else if (event.type === 'status') {
        stopped = event.error && event.status !== 'running' ? { status: event.status, error: event.error } : null;
      }
      timer ??= setTimeout(() => {
        timer = undefined;
        void refresh();
      }, 30);
    });
    void refresh();
    return () => {
      alive = false;
      unsubscribe();
      if (timer) clearTimeout(timer);
    };
  }, [runId]);

  return view;
}
