import { abbreviationEnds } from './sentences';
import type { Piece, Tokenizer } from './tokenizer';

/** A chunk of the document: characters [start, end) of its text, `tokens` long. */
export interface ChunkSpan {
  start: number;
  end: number;
  tokens: number;
  /**
   * What the model is sent when it is not the text's characters [start, end):
   * an exact token slice whose cut splits a character (see token-slices.ts).
   * Only in-memory chunk lists carry it; stored runs are cut at boundaries.
   */
  text?: string;
}

type Boundary = 0 | 1 | 2 | 3; // none, word, sentence, paragraph

interface Cut {
  pos: number;
  tokens: number;
  /** What kind of boundary `pos` is; worked out only for cuts that are considered. */
  kind?: Boundary;
  /** The piece ending here and the one before it are both blank space. */
  blankPair: boolean;
}

const LETTER_OR_DIGIT = /[\p{L}\p{N}\p{M}]/u;
// Scripts written without spaces between words: any character boundary is a word boundary.
const UNSPACED = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Thai}\p{Script=Lao}\p{Script=Khmer}\p{Script=Myanmar}]/u;
const SENTENCE_END = /[.!?。！？…‼⁇⁈⁉](?:["'”’»)\]」』）]*)\s*$/u;
const PARAGRAPH_END = /\n[ \t]*\n\s*$/;

function charBefore(text: string, pos: number): string {
  const c = text.codePointAt(pos - 1) ?? 0;
  // Step back over a surrogate pair.
  if (c >= 0xdc00 && c <= 0xdfff && pos >= 2) return String.fromCodePoint(text.codePointAt(pos - 2) ?? 0);
  return String.fromCodePoint(c);
}

function classify(text: string, pos: number): Boundary {
  if (pos >= text.length) return 3;
  const before = charBefore(text, pos);
  const after = String.fromCodePoint(text.codePointAt(pos) ?? 0);
  const tail = text.slice(Math.max(0, pos - 12), pos);
  if (PARAGRAPH_END.test(tail)) return 3;
  if (SENTENCE_END.test(tail) && (/\s/.test(after) || UNSPACED.test(after) || UNSPACED.test(before))) {
    // "Mr. Darcy", "No. 5": the sentence segmenter's own test, so a chunk does not end within a sentence it keeps whole.
    if (!abbreviationEnds(tail.trimEnd(), text.slice(pos, pos + 12).trimStart())) return 2;
  }
  const inWord = LETTER_OR_DIGIT.test(before) && LETTER_OR_DIGIT.test(after);
  if (inWord && !UNSPACED.test(before) && !UNSPACED.test(after)) return 0;
  return 1;
}

/**
 * The first chunk of a text of which only the beginning, `start`, is known
 * yet: exactly the chunk that chunkText cuts first from the whole text, or
 * undefined where `start` cannot tell it. It is cut from `start` up to a line
 * end that a letter or other visible character follows (there the
 * pre-tokenizer ends a piece, however the text goes on), found after `reach`
 * characters: a chunk cut there before its end was cut as the whole text cuts it.
 */
export function firstChunk(start: string, tokenizer: Tokenizer, maxTokens: number, reach = 5 * maxTokens): ChunkSpan | undefined {
  let end = start.indexOf('\n', reach);
  while (end >= 0 && end + 1 < start.length && /\s/.test(start[end + 1]!)) end = start.indexOf('\n', end + 1);
  if (end < 0 || end + 1 >= start.length) return undefined;
  const text = start.slice(0, end + 1);
  const first = chunkText(text, tokenizer, maxTokens).next().value;
  return first && first.end < text.length ? first : undefined;
}

/**
 * Cuts `text` into chunks of at most `maxTokens` tokens that cover it in order,
 * with no gap and no overlap. A chunk ends at the last paragraph break inside its
 * final 10% if there is one, else at the last sentence end there, else at the last
 * word boundary; never inside a word or a character, except that one unbroken run
 * longer than a chunk is cut between code points.
 */
export function* chunkText(text: string, tokenizer: Tokenizer, maxTokens: number, from = 0): Generator<ChunkSpan> {
  if (!(maxTokens >= 1)) throw new RangeError(`chunk size must be at least 1 token, got ${maxTokens}`);
  const window = Math.floor(maxTokens * 0.9);
  let start = from;
  let tokens = 0;
  let cuts: Cut[] = [];
  let prevBlank = false;
  // From a chunk boundary, which is a piece boundary, the pre-tokenizer splits the rest exactly as it splits the whole.
  for (const p of tokenizer.pieces(from ? text.slice(from) : text)) {
    const piece = from ? { start: p.start + from, end: p.end + from, tokens: p.tokens } : p;
    // Emit chunks until this piece fits; a cut early in the chunk may need several.
    while (tokens > 0 && tokens + piece.tokens > maxTokens) {
      const cut = chooseCut(text, cuts, window);
      yield { start, end: cut.pos, tokens: cut.tokens };
      start = cut.pos;
      tokens -= cut.tokens;
      cuts = cuts.filter((c) => c.pos > cut.pos);
      for (const c of cuts) c.tokens -= cut.tokens;
    }
    if (piece.tokens > maxTokens) {
      // One piece longer than a chunk (a long run of rare characters): the loop above
      // has emptied the buffer, so the piece gets chunks of its own.
      yield* splitPiece(text, piece, tokenizer, maxTokens);
      start = piece.end;
      prevBlank = false;
      continue;
    }
    tokens += piece.tokens;
    // Two runs of blank space in a row ("  " before "0") become one piece when the
    // text ends between them, so a chunk cut there would count differently: not a boundary.
    const blank = isBlank(text, piece.start, piece.end);
    cuts.push({ pos: piece.end, tokens, blankPair: blank && prevBlank });
    prevBlank = blank;
  }
  if (start < text.length) yield { start, end: text.length, tokens };
}

/**
 * Cuts one over-long piece between code points into runs of at most `maxTokens`
 * tokens (at least one code point each), counting each run as it will be read.
 */
function* splitPiece(text: string, piece: Piece, tokenizer: Tokenizer, maxTokens: number): Generator<ChunkSpan> {
  const bounds: number[] = [];
  for (let i = piece.start; i < piece.end;) {
    i += (text.codePointAt(i) ?? 0) > 0xffff ? 2 : 1;
    bounds.push(Math.min(i, piece.end));
  }
  let from = piece.start;
  let first = 0; // index in `bounds` of the first end after `from`
  while (from < piece.end) {
    // Bisect for the longest run that fits; the first code point is taken even if it does not.
    let lo = first;
    let hi = bounds.length - 1;
    while (lo < hi) {
      const mid = Math.ceil((lo + hi) / 2);
      if (tokenizer.count(text.slice(from, bounds[mid])) <= maxTokens) lo = mid;
      else hi = mid - 1;
    }
    const end = bounds[lo]!;
    yield { start: from, end, tokens: tokenizer.count(text.slice(from, end)) };
    from = end;
    first = lo + 1;
  }
}

function isBlank(text: string, start: number, end: number): boolean {
  for (let i = start; i < end; i++) {
    const c = text.charCodeAt(i);
    if (!(c === 32 || (c >= 9 && c <= 13) || c === 0xa0 || c === 0x3000 || (c >= 0x2000 && c <= 0x200a))) return false;
  }
  return end > start;
}

function kindOf(text: string, cut: Cut): Boundary {
  cut.kind ??= cut.blankPair ? 0 : classify(text, cut.pos);
  return cut.kind;
}

function chooseCut(text: string, cuts: readonly Cut[], window: number): Cut {
  let best: Cut | undefined;
  // Preference: paragraph, then sentence inside the window; otherwise the last word boundary.
  for (const kind of [3, 2] as const) {
    for (let i = cuts.length - 1; i >= 0; i--) {
      const c = cuts[i]!;
      if (c.tokens < window) break;
      if (kindOf(text, c) >= kind) return c;
    }
  }
  for (let i = cuts.length - 1; i >= 0; i--) {
    const c = cuts[i]!;
    if (kindOf(text, c) >= 1) return c;
    best ??= c;
  }
  // No word boundary at all (one giant word): cut between pieces.
  return best ?? cuts[cuts.length - 1]!;
}

/** Collects all chunks. */
export function chunkAll(text: string, tokenizer: Tokenizer, maxTokens: number): ChunkSpan[] {
  return [...chunkText(text, tokenizer, maxTokens)];
}
