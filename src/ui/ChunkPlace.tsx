import { useEffect, useState } from 'react';
import { type Anchor, describePlace } from '../core/anchors';
import { store } from './data';

// Anchors per run: read once, since every revision of a run shares its book.
const cache = new Map<string, Promise<readonly Anchor[]>>();

function anchorsOfRun(runId: string): Promise<readonly Anchor[]> {
  let found = cache.get(runId);
  if (!found) {
    found = (async () => {
      const s = await store;
      const run = await s.getRun(runId);
      return run ? await s.getAnchors(run.documentId) : [];
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

/** Where a chunk starts in its book, "Chapter 12, p. 143"; nothing when the book has no structure. */
export function ChunkPlace({ runId, offset }: { runId: string; offset: number }) {
  const place = describePlace(useRunAnchors(runId), offset);
  return place ? <span className="place"> · {place}</span> : null;
}
