import type { ChunkSpan } from './chunker';

/**
 * Why a skim read a chunk: ranked by relevance to the question, next to a
 * ranked chunk, the start of a book nothing matched, or pointed to by a name
 * the memory wrote down, on the way forward or in the look-back pass.
 */
export type ReadReason = { by: 'ranked' | 'neighbour' | 'start' } | { by: 'followed' | 'looked-back'; name: string };

/** A chunk a run reads; a skim says why (absent on full reads and on runs stored before reasons were kept). */
export interface PlannedChunk extends ChunkSpan {
  reason?: ReadReason;
}

/** The reason as the timeline says it: "ranked", "neighbour", "followed: Ortiz". */
export function describeReason(reason: ReadReason): string {
  switch (reason.by) {
    case 'ranked':
      return 'ranked';
    case 'neighbour':
      return 'neighbour';
    case 'start':
      return 'start of the book (nothing matched)';
    case 'followed':
      return `followed: ${reason.name}`;
    case 'looked-back':
      return `looked back: ${reason.name}`;
  }
}
