import { useEffect, useState } from 'react';
import { store } from '../data';

const NONE: ReadonlySet<number> = new Set();

/** What "Search memories" holds for the run shown: the words typed, and the revisions whose memory contains them. */
export interface MemorySearch {
  query: string;
  setQuery(text: string): void;
  /** Revisions (by index) whose memory contains the query; none while it is empty. */
  marked: ReadonlySet<number>;
}

/**
 * The inspector's search, kept with the run it was typed on: opening another
 * run starts with an empty box and no matches, not the last run's words and
 * count. Memories are searched as storage holds them, again when revisions
 * arrive.
 */
export function useMemorySearch(runId: string, revisions: number): MemorySearch {
  const [typed, setTyped] = useState({ runId, text: '' });
  const [found, setFound] = useState<{ runId: string; hits: ReadonlySet<number> }>({ runId, hits: NONE });
  const query = typed.runId === runId ? typed.text : '';
  const q = query.trim();

  useEffect(() => {
    if (!q) return;
    let alive = true;
    const timer = setTimeout(async () => {
      const hits = await (await store).searchMemories(runId, q);
      if (alive) setFound({ runId, hits: new Set(hits) });
    }, 150);
    return () => {
      alive = false;
      clearTimeout(timer);
    };
  }, [q, runId, revisions]);

  return {
    query,
    setQuery: (text) => {
      setTyped({ runId, text });
      // An empty search marks nothing at once; a new one keeps the last matches until its own arrive.
      if (!text.trim()) setFound({ runId, hits: NONE });
    },
    // Matches found on another run are never shown on this one.
    marked: q && found.runId === runId ? found.hits : NONE,
  };
}
