/**
 * The part arithmetic with parts larger than any text: each book's text is one
 * value, committed with its record before the book can be read, as texts were
 * stored before they were kept in parts. bench/big-books.ts builds the app with
 * this module in place of src/core/text-parts.ts to measure that baseline.
 */
export * from '../src/core/text-parts';

/** Above the longest string a browser holds (2^29 characters): every text is one part. */
export const PART_CHARS = 2 ** 30;
