import { fold, foldMapped } from './fold';
import type { Span } from './text';

/**
 * Where `needle` occurs in `text`, matched as the memory search matches (core/fold: case, accents and width
 * folded): the spans in `text`, in order, none overlapping. A match is marked on the characters it came from,
 * however many code units they fold to (İ, "ﬁ", a letter with its accent written apart).
 */
export function findAll(text: string, needle: string): Span[] {
  const want = fold(needle);
  if (!want) return [];
  const { folded, from, to } = foldMapped(text);
  const spans: Span[] = [];
  for (let at = folded.indexOf(want); at >= 0; at = folded.indexOf(want, at + want.length)) {
    const start = from[at]!;
    // A match that takes part of a character ("f" of "ﬁ") marks the whole of it; the next starts after it.
    const end = to[at + want.length - 1]!;
    if (spans.length && start < spans.at(-1)!.end) continue;
    spans.push({ start, end });
  }
  return spans;
}
