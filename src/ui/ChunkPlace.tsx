import { useEffect, useState } from 'react';
import { type Anchor, sectionPlace } from '../core/anchors';
import { runAnchors } from '../core/book-set';
import { store } from './data';

// Anchors per run: read once, since every revision of a run shares its book.
const cache = new Map<string, Promise<readonly Anchor[]>>();

function anchorsOfRun(runId: string): Promise<readonly Anchor[]> {
  let found = cache.get(runId);
  if (!found) {
    found = (async () => {
      const s = await store;
      const run = await s.getRun(runId);
      // A set's places name the book: each book's anchors, moved to where it lies in the set.
      return run ? await runAnchors(run, (id) => s.getAnchors(id)) : [];
    })();
    cache.set(runId, found);
  }
  return found;
}

/** The chapters, headings and pages of a run's book; empty until read, or when the book has none. */
export function useRunAnchors(runId: string): readonly Anchor[] {
  const [anchors, setAnchors] = useState<readonly Anchor[]>([]);
  useEffect(() => {
    let alive = true;
    void anchorsOfRun(runId).then((a) => alive && setAnchors(a));
    return () => {
      alive = false;
    };
  }, [runId]);
  return anchors;
}

/** Where a chunk is, "Chapter 12, p. 143", "Letter 4 – Chapter 1", or in a set "Persuasion · Chapter 4, p. 31"; nothing when nothing is known. */
export function ChunkPlace({ runId, start, end }: { runId: string; start: number; end: number }) {
  const place = sectionPlace(useRunAnchors(runId), start, end);
  return place ? <span className="place"> · {place}</span> : null;
}
