import type { ChunkSpan } from './chunker';
import type { Tokenizer } from './tokenizer';

/** How a text is cut into chunks. */
export type ChunkCutter =
  /** This app's default for books: chunks of up to the size, ending at a paragraph, sentence or word boundary (chunker.ts). */
  | 'boundary'
  /** The paper's: the text encoded whole and its ids sliced every `size` tokens exactly. */
  | 'token-slices';

/** What each cutter does, in words for a page or a log. */
export const CUTTER_LABELS: Readonly<Record<ChunkCutter, string>> = {
  boundary: 'cut at paragraph, sentence or word boundaries',
  'token-slices': 'exact token slices, as the paper cuts',
};

/**
 * The paper's chunking: the text encoded whole (as plain text, no special
 * tokens), its ids sliced every `size`, each slice decoded. Every chunk but the
 * last is exactly `size` tokens, and a cut may fall inside a word or even
 * inside a character, whose bytes then decode to U+FFFD on both sides.
 *
 * Each span also says where it lies in the text, for showing it: a character
 * that a cut splits is counted in the later span. Where the decoded slice is
 * not exactly those characters, the span carries the decoded text, which is
 * what the model is sent.
 */
export function sliceTokens(text: string, tokenizer: Tokenizer, size: number): ChunkSpan[] {
  if (!Number.isInteger(size) || size < 1) throw new RangeError(`chunk size must be a whole number of tokens, at least 1; got ${size}`);
  const ids = tokenizer.encode(text);
  const cuts = cutOffsets(text, tokenizer, ids, size);
  const spans: ChunkSpan[] = [];
  for (let i = 0, k = 0; i < ids.length; i += size, k++) {
    const slice = ids.slice(i, i + size);
    const start = k === 0 ? 0 : cuts[k - 1]!;
    const end = k < cuts.length ? cuts[k]! : text.length;
    const span: ChunkSpan = { start, end, tokens: slice.length };
    const decoded = tokenizer.decode(slice);
    if (decoded !== text.slice(start, end)) span.text = decoded;
    spans.push(span);
  }
  return spans;
}

/**
 * The character offset of each cut (after every `size` ids but the end), found
 * from the tokenizer's pieces: encoding the whole text gives each piece's ids
 * in turn, so a cut at a piece's edge is exact, and one inside a piece is
 * placed after the characters its first tokens decode to whole.
 */
function cutOffsets(text: string, tokenizer: Tokenizer, ids: readonly number[], size: number): number[] {
  const cuts: number[] = [];
  let next = size; // token index of the next cut
  let seen = 0; // tokens before the current piece
  for (const piece of tokenizer.pieces(text)) {
    while (next < ids.length && seen + piece.tokens >= next) {
      const within = next - seen;
      cuts.push(within === piece.tokens ? piece.end : piece.start + wholePrefix(text.slice(piece.start, piece.end), tokenizer.decode(ids.slice(seen, next))));
      next += size;
    }
    seen += piece.tokens;
    if (next >= ids.length) break;
  }
  return cuts;
}

/** How many leading characters of `piece` the decoded tokens give whole; a split surrogate pair counts as not given. */
function wholePrefix(piece: string, decoded: string): number {
  let m = 0;
  while (m < piece.length && m < decoded.length && piece[m] === decoded[m]) m++;
  if (m > 0 && m < piece.length) {
    const c = piece.charCodeAt(m - 1);
    if (c >= 0xd800 && c <= 0xdbff) m--;
  }
  return m;
}
