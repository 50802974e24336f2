import { useEffect, useState } from 'react';
import type { RevisionRecord, RunRecord, RunStatus } from '../storage/db';
import { onRunEvent, store } from './client';

export interface RunView {
  run: RunRecord | null;
  revisions: RevisionRecord[];
  text: string | null;
  /** The memory being written right now, as far as it has come. */
  writing: { index: number; text: string } | null;
}

/**
 * A run as storage holds it, kept current by the worker's events. Events only
 * say that something changed; what changed is read back from storage, in
 * batches, so a burst of fast revisions costs a few reads.
 */
export function useRun(runId: string | null): RunView {
  const [view, setView] = useState<RunView>({ run: null, revisions: [], text: null, writing: null });

  useEffect(() => {
    if (!runId) {
      setView({ run: null, revisions: [], text: null, writing: null });
      return;
    }
    let alive = true;
    let revisions: RevisionRecord[] = [];
    let text: string | null = null;
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
      const s = await store;
      const stored = (await s.getRun(runId)) ?? null;
      const run = stored && stopped && stored.status === 'running' ? { ...stored, ...stopped } : stored;
      const fresh = await s.listRevisionsFrom(runId, revisions.length);
      if (run && text === null) text = (await s.getText(run.documentId)) ?? null;
      if (fresh.length) revisions = [...revisions, ...fresh];
      loading = false;
      if (alive) setView((v) => ({ run, revisions, text, writing: v.writing && v.writing.index >= revisions.length ? v.writing : null }));
      if (again && alive) {
        again = false;
        void refresh();
      }
    };

    const unsubscribe = onRunEvent((event) => {
      if (event.type === 'document' || event.type === 'control' || event.runId !== runId) return;
      if (event.type === 'writing') {
        const { index, text: written } = event;
        return setView((v) => ({ ...v, writing: { index, text: written } }));
      }
      if (event.type === 'status') stopped = event.error && event.status !== 'running' ? { status: event.status, error: event.error } : null;
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
