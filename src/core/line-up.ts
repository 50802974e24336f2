import { countAtOrBefore } from './anchors';

/** A chunk a run read, by its characters in the run's text (the book, or a set's joined text). */
export interface ReadSpan {
  start: number;
  end: number;
}

/**
 * Which of another run's chunks (sorted by `start`) read the character at `offset` of the same text: -1 where none
 * did (it has not got there yet, or skimmed past). Two runs are compared at the same place in the book, so runs cut
 * into chunks of different sizes line up as well as runs of the same size.
 */
export function chunkAtPlace(chunks: readonly ReadSpan[], offset: number): number {
  const i = countAtOrBefore(chunks, offset, (c) => c.start) - 1;
  return i >= 0 && offset < chunks[i]!.end ? i : -1;
}
