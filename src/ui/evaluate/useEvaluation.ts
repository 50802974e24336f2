import { useEffect, useState } from 'react';
import { type DatasetSampleRecord, type EvaluationRecord, type EvaluationSampleRecord, store } from '../data';
import { onEvaluationEvent } from './events';

export interface Step {
  ordinal: number;
  chunk: number;
  chunks: number;
}

export interface EvaluationView {
  evaluation: EvaluationRecord | null;
  samples: EvaluationSampleRecord[];
  /** The items read so far, for an evaluation of dataset files. */
  items: DatasetSampleRecord[];
  /** Progress inside the sample being read, from the worker's events. */
  step: Step | null;
}

const EMPTY: EvaluationView = { evaluation: null, samples: [], items: [], step: null };

/**
 * A sweep as storage holds it, kept current by the worker's events. Samples
 * are stored in sweep order, so each refresh reads only those after the last
 * one it has.
 */
export function useEvaluation(id: string | null): EvaluationView {
  const [view, setView] = useState<EvaluationView>(EMPTY);
  // Another sweep starts from nothing, in the same render that names it.
  const [viewId, setViewId] = useState(id);
  if (viewId !== id) {
    setViewId(id);
    setView(EMPTY);
  }

  useEffect(() => {
    if (!id) return;
    let alive = true;
    let samples: EvaluationSampleRecord[] = [];
    let items: DatasetSampleRecord[] = [];
    let timer: ReturnType<typeof setTimeout> | undefined;
    let loading = false;
    let again = false;

    const refresh = async () => {
      if (loading) {
        again = true;
        return;
      }
      loading = true;
      const s = await store;
      const evaluation = (await s.getEvaluation(id)) ?? null;
      let last: number;
      if (evaluation?.dataset) {
        const fresh = await s.listDatasetSamples(id, items.length ? items[items.length - 1]!.ordinal + 1 : 0);
        if (fresh.length) items = [...items, ...fresh];
        last = items.length ? items[items.length - 1]!.ordinal : -1;
      } else {
        const fresh = await s.listEvaluationSamples(id, samples.length ? samples[samples.length - 1]!.ordinal + 1 : 0);
        if (fresh.length) samples = [...samples, ...fresh];
        last = samples.length ? samples[samples.length - 1]!.ordinal : -1;
      }
      loading = false;
      // A step of a sample that is now stored is over.
      if (alive) setView((v) => ({ evaluation, samples, items, step: v.step && v.step.ordinal > last ? v.step : null }));
      if (again && alive) {
        again = false;
        void refresh();
      }
    };

    const unsubscribe = onEvaluationEvent((event) => {
      if (event.evaluationId !== id || event.type === 'control') return;
      if (event.type === 'step') {
        setView((v) => ({ ...v, step: { ordinal: event.ordinal, chunk: event.chunk, chunks: event.chunks } }));
        return;
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
  }, [id]);

  return view;
}
