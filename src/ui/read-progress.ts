import type { RunRecord } from './data';

/** The chunks a run reads: while the book is still being cut, the estimate. */
export function chunksOf(run: RunRecord): number {
  return run.chunking ? Math.max(run.chunking.estimate, run.chunks.length) : run.chunks.length;
}

/** How far the book is read for the questions of one read, and how many of them are still being read. */
export interface BookProgress {
  read: number;
  total: number;
  /** Questions still being read. */
  writing: number;
}

/**
 * The book read for the questions still being read: the slowest of them. A
 * paused, cancelled or failed question waits apart and does not hold the
 * count back; with none reading, the furthest any question got.
 */
export function bookProgress(questions: readonly RunRecord[]): BookProgress {
  const reading = questions.filter((r) => r.status === 'running');
  const total = Math.max(0, ...questions.map(chunksOf));
  const read = reading.length ? Math.min(...reading.map((r) => r.nextChunk)) : Math.max(0, ...questions.map((r) => r.nextChunk));
  return { read: Math.min(read, total), total, writing: reading.length };
}
