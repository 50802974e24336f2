/**
 * The stream import with no file streamed: bench/big-books.ts builds its
 * baseline with this module in place of src/library/stream-import.ts, so that
 * every text is decoded whole before it is stored, as before streaming.
 */
export * from '../src/library/stream-import';

export const STREAM_BYTES = { min: Infinity, max: -1 };
