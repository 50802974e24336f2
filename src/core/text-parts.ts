/**
 * A document's text kept as parts of a fixed number of characters (the last
 * one shorter): the arithmetic that finds which parts hold a range of
 * characters, and the one function that reads such a range across parts.
 * Storage keeps the parts; everything that reads a book's text from storage,
 * a whole book or one chunk of it, goes through `sliceParts`.
 */

/**
 * Characters per part for new documents: 2^18, at most 512 KB as a string.
 * Parts are kept as strings, not UTF-8 bytes. Measured in Chromium (`npm run
 * bench`, text layouts): parts this size commit the document with its first
 * part in tens of milliseconds and read a chunk's range in 9 to 51 ms, and
 * writing a whole book in parts is no slower than writing it as one value;
 * larger parts made all three slower. UTF-8 parts took about 30% less disk for
 * English text, but a range read 2 to 9 times slower (each part is decoded
 * whole) and their first part committed no sooner: reading is what a run
 * waits on. Each document records its own part size, so this may change
 * without touching stored books.
 */
export const PART_CHARS = 1 << 18;

/** Parts a text of `chars` characters is kept in. */
export function partCount(chars: number, partChars: number): number {
  return Math.ceil(chars / partChars);
}

/** The parts holding characters [start, end) (at least one part, for an empty range too). */
export function partsCovering(start: number, end: number, partChars: number): { first: number; last: number } {
  const first = Math.floor(start / partChars);
  return { first, last: Math.max(first, Math.ceil(end / partChars) - 1) };
}

/** A text cut into its parts: slices of the text, in order (slices share the text's memory until they are stored). */
export function* cutParts(text: string, partChars: number): Generator<string> {
  for (let start = 0; start < text.length; start += partChars) yield text.slice(start, start + partChars);
}

/** Consecutive parts of a text, `partChars` characters each (the last may be shorter), the first of which is part number `first`. */
export interface PartRange {
  parts: readonly string[];
  first: number;
  partChars: number;
}

/**
 * Characters [start, end) of a text, from its consecutive parts.
 * Exactly `text.slice(start, end)` of the whole text, also where a range
 * begins or ends inside a surrogate pair.
 */
export function sliceParts({ parts, first, partChars }: PartRange, start: number, end: number): string {
  if (end <= start) return '';
  const from = start - first * partChars;
  const to = end - first * partChars;
  const part = (k: number) => {
    const text = parts[k];
    if (text === undefined) throw new RangeError(`part ${first + k} is missing: characters ${start}-${end} span parts ${first}-${first + parts.length - 1}`);
    return text;
  };
  const i = Math.floor(from / partChars);
  const j = Math.floor((to - 1) / partChars);
  if (i === j) return part(i).slice(from - i * partChars, to - i * partChars);
  const out = [part(i).slice(from - i * partChars)];
  for (let k = i + 1; k < j; k++) out.push(part(k));
  out.push(part(j).slice(0, to - j * partChars));
  return out.join('');
}
