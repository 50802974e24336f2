import { useEffect, useState } from 'react';
import { type DatasetSampleRecord, type EvaluationRecord, type EvaluationSampleRecord, store } from '../data';
import { onEvaluationEvent } from './events';
import { type HeardStop, heardStop, StoredView, withHeardStop } from '../stored-view';

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
    let samples: EvaluationSampleRecord[] = [];
    let items: DatasetSampleRecord[] = [];
    let stopped: HeardStop | null = null;

    const view = new StoredView(async () => {
      let evaluation: EvaluationRecord | null;
      let last: number;
      try {
        const s = await store;
        evaluation = withHeardStop((await s.getEvaluation(id)) ?? null, stopped);
        if (evaluation?.dataset) {
          const fresh = await s.listDatasetSamples(id, items.length ? items[items.length - 1]!.ordinal + 1 : 0);
          if (fresh.length) items = [...items, ...fresh];
          last = items.length ? items[items.length - 1]!.ordinal : -1;
        } else {
          const fresh = await s.listEvaluationSamples(id, samples.length ? samples[samples.length - 1]!.ordinal + 1 : 0);
          if (fresh.length) samples = [...samples, ...fresh];
          last = samples.length ? samples[samples.length - 1]!.ordinal : -1;
        }
      } catch {
        return; // storage out of reach (the page says so); the next event tries again
      }
      // A step of a sample that is now stored is over.
      if (view.open) setView((v) => ({ evaluation, samples, items, step: v.step && v.step.ordinal > last ? v.step : null }));
    });

    const unsubscribe = onEvaluationEvent((event) => {
      if (event.evaluationId !== id || event.type === 'control') return;
      if (event.type === 'step') {
        setView((v) => ({ ...v, step: { ordinal: event.ordinal, chunk: event.chunk, chunks: event.chunks } }));
        return;
      }
      if (event.type === 'status') stopped = heardStop(event);
      view.soon();
    });
    void view.refresh();
    return () => {
      view.close();
      unsubscribe();
    };
  }, [id]);

  return view;
}
