import { useEffect, useState } from 'react';
import { diffMemory, type MemoryDiff } from '../../core/memory-diff';
import { judgeSentences } from '../../core/provenance';
import type { Span } from '../../core/text';

/*
 * The marks the inspector draws on a revision — the sentences its memory drew
 * on, and what the memory gained and lost — are worked out after the pane is
 * drawn, in tasks of their own: a long section never holds the page up.
 */

/** Longest stretch of judging sentences before the page gets a turn (a frame at 60 Hz is 16 ms). */
const SLICE_MS = 8;

/** The sentences of `section` that `memory` drew on, judged in short slices; null until they are known. */
export function useDrawnOn(section: string, memory: string): Span[] | null {
  const [result, setResult] = useState<{ section: string; memory: string; spans: Span[] } | null>(null);
  useEffect(() => {
    let stopped = false;
    const judging = judgeSentences(section, memory);
    const spans: Span[] = [];
    const slice = () => {
      if (stopped) return;
      const until = performance.now() + SLICE_MS;
      for (let next = judging.next(); ; next = judging.next()) {
        if (next.done) return setResult({ section, memory, spans });
        if (next.value) spans.push(next.value);
        if (performance.now() >= until) break;
      }
      setTimeout(slice);
    };
    slice();
    return () => {
      stopped = true;
    };
  }, [section, memory]);
  return result && result.section === section && result.memory === memory ? result.spans : null;
}

/** The word-level change from `before` to `after`, worked out in a task after the pane is drawn; null until then. */
export function useMemoryDiff(before: string, after: string): MemoryDiff | null {
  const [result, setResult] = useState<{ before: string; after: string; diff: MemoryDiff } | null>(null);
  useEffect(() => {
    const timer = setTimeout(() => setResult({ before, after, diff: diffMemory(before, after) }));
    return () => clearTimeout(timer);
  }, [before, after]);
  return result && result.before === before && result.after === after ? result.diff : null;
}

/**
 * The segmenters and the diff's word pattern are compiled on first use, a
 * long task of its own: done while the page is idle, not as the first
 * revision is shown.
 */
export function warmUpMarks(): void {
  const warm = () => {
    void [...judgeSentences('A first sentence here. And another one.', 'first sentence')];
    diffMemory('a first memory', 'a second memory');
  };
  if ('requestIdleCallback' in window) requestIdleCallback(warm, { timeout: 5000 });
  else setTimeout(warm, 1000);
}
