import type { Span } from './text';

/**
 * Where `needle` occurs in `text`, ignoring case as the memory search does
 * (each compared in the locale's lower case): the spans in `text`, in order,
 * none overlapping. A letter whose lower case is longer (İ) keeps the spans
 * on the original characters.
 */
export function findAll(text: string, needle: string): Span[] {
  const want = needle.toLocaleLowerCase();
  if (!want) return [];
  let lower = '';
  // For each code unit of `lower`, the code unit of `text` it came from.
  const from: number[] = [];
  for (let i = 0; i < text.length;) {
    const ch = String.fromCodePoint(text.codePointAt(i)!);
    const low = ch.toLocaleLowerCase();
    lower += low;
    for (let k = 0; k < low.length; k++) from.push(i);
    i += ch.length;
  }
  from.push(text.length);
  const spans: Span[] = [];
  for (let at = lower.indexOf(want); at >= 0; at = lower.indexOf(want, at + want.length)) {
    const start = from[at]!;
    // The end is where the character after the match starts in `text`.
    const end = from[at + want.length]!;
    if (end > start) spans.push({ start, end });
  }
  return spans;
}
