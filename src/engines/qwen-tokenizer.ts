import type { BytePairEncodingCore } from 'gpt-tokenizer/BytePairEncodingCore';
import { isNfc } from '../core/nfc';
import type { Piece, Tokenizer } from '../core/tokenizer';

/**
 * Qwen2.5's byte-level BPE (151,643 tokens plus its control tokens).
 *
 * Text is split with Qwen's own pre-tokenizer pattern and each piece is encoded
 * on its own. BPE never merges across pieces, so this gives the same ids as
 * encoding the whole text, and a piece cache makes repeated words free.
 * Because pieces are encoded as plain text, control strings such as
 * `<|im_start|>` inside a document never become special tokens.
 *
 * The BPE itself is gpt-tokenizer's core over ranks precomputed from Qwen's
 * tokenizer.json (scripts/qwen-ranks.ts): it keeps one map of the vocabulary,
 * a fraction of the memory a merges-based tokenizer holds.
 */

// Qwen2's pattern with the inline (?i:...) group spelled out, which JS lacks.
const PRETOKENIZE = /'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD]|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+/gu;

// A piece longer than this (a line of 10 MB with no space) is cut, so BPE stays
// linear; counts across such a cut may differ from the model's by a token.
const MAX_PIECE_CHARS = 256;
const CACHE_LIMIT = 200_000;

/** The first control token's id; ids from here on are never produced from document text. */
export const FIRST_SPECIAL_ID = 151643;

/** Qwen's control tokens from FIRST_SPECIAL_ID on (the last four are Qwen3's): decoded to their text, never encoded. */
const SPECIAL_TOKENS = [
  '<|endoftext|>',
  '<|im_start|>',
  '<|im_end|>',
  '<|object_ref_start|>',
  '<|object_ref_end|>',
  '<|box_start|>',
  '<|box_end|>',
  '<|quad_start|>',
  '<|quad_end|>',
  '<|vision_start|>',
  '<|vision_end|>',
  '<|vision_pad|>',
  '<|image_pad|>',
  '<|video_pad|>',
  '<tool_call>',
  '</tool_call>',
  '<|fim_prefix|>',
  '<|fim_middle|>',
  '<|fim_suffix|>',
  '<|fim_pad|>',
  '<|repo_name|>',
  '<|file_sep|>',
  '<tool_response>',
  '</tool_response>',
  '<think>',
  '</think>',
];

/** What QwenTokenizer needs of a BPE: one pre-split piece to ids (as plain text), and ids back to text. */
export interface PieceEncoder {
  encode(text: string, options: { add_special_tokens: boolean }): number[];
  decode(ids: readonly number[], options?: { skip_special_tokens?: boolean }): string;
}

/** A token's text, or its bytes when they are not valid UTF-8 on their own; index = rank = id. */
export type QwenRanks = readonly (string | readonly number[])[];

const utf8 = new TextEncoder();
const fatalUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
// Lossy like the reference's decoder; a leading U+FEFF is text, not a byte-order mark to drop.
const lossyUtf8 = new TextDecoder('utf-8', { ignoreBOM: true });

/** Byte pair encoding of one pre-split piece, as Qwen's tokenizer does it, over precomputed ranks. */
export class QwenBpe implements PieceEncoder {
  private readonly core: BytePairEncodingCore;
  /** Byte string → rank of the tokens that are not valid UTF-8; built only for pieces holding U+FEFF. */
  private byteRanks?: Map<string, number>;

  constructor(
    private readonly ranks: QwenRanks,
    Core: typeof BytePairEncodingCore,
  ) {
    this.core = new Core({
      bytePairRankDecoder: ranks,
      // Each call gets one whole piece: it was already split by our pattern.
      tokenSplitRegex: /[\s\S]+/gu,
      // QwenTokenizer caches whole pieces; a second cache would only hold memory.
      mergeCacheSize: 0,
      // No special tokens: the core cannot produce them from any text.
    });
  }

  encode(piece: string): number[] {
    // The core reads a key's bytes through a TextDecoder that drops a leading
    // byte-order mark, so keys starting with U+FEFF need their own lookup.
    if (piece.includes('\uFEFF')) return this.encodeWithBom(piece);
    return this.core.encodeNative(piece);
  }

  decode(ids: readonly number[]): string {
    let out = '';
    let pending: number[] = []; // bytes of tokens that are not whole characters
    for (const id of ids) {
      const token = this.ranks[id] ?? SPECIAL_TOKENS[id - FIRST_SPECIAL_ID];
      // Ids outside the vocabulary (a model's padding rows) decode to nothing, as in the reference.
      if (token === undefined) continue;
      if (typeof token === 'string') {
        // A valid UTF-8 token starts a character, so pending bytes end where it begins.
        if (pending.length) out += lossyUtf8.decode(Uint8Array.from(pending));
        pending = [];
        out += token;
      } else {
        for (const b of token) pending.push(b);
      }
    }
    if (pending.length) out += lossyUtf8.decode(Uint8Array.from(pending));
    return out;
  }

  /** The rank of a run of bytes, or undefined if no token has exactly those bytes. */
  private rankOf(bytes: Uint8Array): number | undefined {
    let text: string;
    try {
      text = fatalUtf8.decode(bytes);
    } catch {
      this.byteRanks ??= new Map(this.ranks.flatMap((r, id) => (typeof r === 'string' ? [] : [[String.fromCharCode(...r), id] as const])));
      return this.byteRanks.get(String.fromCharCode(...bytes));
    }
    // A whole token comes back from the core as itself (its string lookup is exact).
    const ids = this.core.encodeNative(text);
    return ids.length === 1 && this.ranks[ids[0]!] === text ? ids[0] : undefined;
  }

  /** Rank BPE done here, for the rare piece with U+FEFF in it. */
  private encodeWithBom(piece: string): number[] {
    const bytes = utf8.encode(piece);
    const starts = Array.from({ length: bytes.length + 1 }, (_, i) => i);
    const rank = (i: number) => (i + 2 < starts.length ? (this.rankOf(bytes.subarray(starts[i], starts[i + 2])) ?? Infinity) : Infinity);
    const ranks = starts.slice(0, -1).map((_, i) => rank(i));
    for (;;) {
      let best = -1;
      for (let i = 0; i < ranks.length; i++) if (ranks[i]! < (best < 0 ? Infinity : ranks[best]!)) best = i;
      if (best < 0) break;
      starts.splice(best + 1, 1);
      ranks.splice(best + 1, 1);
      ranks[best] = rank(best);
      if (best > 0) ranks[best - 1] = rank(best - 1);
    }
    const ids: number[] = [];
    for (let i = 0; i + 1 < starts.length; i++) ids.push(this.rankOf(bytes.subarray(starts[i], starts[i + 1]))!);
    return ids;
  }
}

/** An NFC-normalized copy of a text that was not NFC, with what is needed to map offsets back. */
interface Normalized {
  text: string;
  /** Each stretch that normalization changed: [raw start, raw end, start here, end here], in order. */
  changed: [number, number, number, number][];
}

/**
 * NFC, done stretch by stretch so offsets can be mapped back. Nothing composes
 * with a following ASCII character, so the text normalizes independently on
 * either side of one: each non-ASCII run is normalized with the character before it.
 */
function normalizeMapped(text: string): Normalized {
  const parts: string[] = [];
  const changed: Normalized['changed'] = [];
  let raw = 0;
  let delta = 0;
  for (const m of text.matchAll(/[^\0-\x7f]+/g)) {
    const start = Math.max(0, m.index - 1);
    const end = m.index + m[0].length;
    const before = text.slice(start, end);
    const after = before.normalize('NFC');
    if (after === before) continue;
    parts.push(text.slice(raw, start), after);
    changed.push([start, end, start + delta, start + delta + after.length]);
    delta += after.length - before.length;
    raw = end;
  }
  parts.push(text.slice(raw));
  return { text: parts.join(''), changed };
}

/** Qwen2.5's tokenizer over any piece encoder: its own split, NFC and a piece cache. */
export class QwenTokenizer implements Tokenizer {
  readonly name = 'qwen2.5';
  private cache = new Map<string, number[]>();

  constructor(private readonly inner: PieceEncoder) {}

  private encodePiece(piece: string): number[] {
    let ids = this.cache.get(piece);
    if (!ids) {
      ids = this.inner.encode(piece, { add_special_tokens: false });
      if (this.cache.size >= CACHE_LIMIT) this.cache.clear();
      // A copy as the key: a slice would keep the whole text it came from alive.
      this.cache.set(piece.length >= 13 ? (piece + ' ').slice(0, -1) : piece, ids);
    }
    return ids;
  }

  /** [start, end) of each part of a piece longer than MAX_PIECE_CHARS found at `at`, cut between code points. */
  private static *cut(piece: string, at: number): Generator<[number, number]> {
    let from = 0;
    while (from < piece.length) {
      let to = Math.min(piece.length, from + MAX_PIECE_CHARS);
      const c = piece.charCodeAt(to - 1);
      if (to < piece.length && c >= 0xd800 && c <= 0xdbff) to--; // keep surrogate pairs whole
      yield [at + from, at + to];
      from = to;
    }
  }

  /*
   * The model normalizes the whole text to NFC before splitting it. Text that
   * is already NFC (as ingested books are) is split as it is, on the fast paths
   * below; other text goes through `runs`.
   */

  /**
   * Runs of a text that is not NFC, each with its ids: the text is split
   * normalized, and pieces that begin or end inside a stretch normalization
   * changed are joined into one run of the original text.
   */
  private *runs(text: string): Generator<{ start: number; end: number; ids: number[] }> {
    const { text: normal, changed } = normalizeMapped(text);
    let k = 0; // the first changed stretch that does not end before the current piece's end
    let delta = 0; // original offset minus normalized offset, before stretch k
    let runStart = 0;
    let ids: number[] = [];
    for (const m of normal.matchAll(PRETOKENIZE)) {
      const parts = m[0].length <= MAX_PIECE_CHARS ? [[m.index, m.index + m[0].length] as [number, number]] : QwenTokenizer.cut(m[0], m.index);
      for (const [start, end] of parts) {
        for (const id of this.encodePiece(normal.slice(start, end))) ids.push(id);
        while (k < changed.length && changed[k]![3] < end) {
          delta = changed[k]![1] - changed[k]![3];
          k++;
        }
        const stretch = changed[k];
        if (stretch && stretch[2] < end && end < stretch[3]) continue; // ends inside a changed stretch: the run goes on
        const rawEnd = stretch && end === stretch[3] ? stretch[1] : end + delta;
        yield { start: runStart, end: rawEnd, ids };
        runStart = rawEnd;
        ids = [];
      }
    }
  }

  /**
   * Each piece of a text with its ids: pieces as the pattern splits them (a
   * very long one cut), or for text that is not NFC, the runs of `runs`.
   */
  private *segments(text: string): Generator<{ start: number; end: number; ids: number[] }> {
    // Checked without normalizing a whole book where its characters allow (a second copy of it, on every pass).
    if (!isNfc(text)) {
      yield* this.runs(text);
      return;
    }
    for (const m of text.matchAll(PRETOKENIZE)) {
      const s = m[0];
      if (s.length <= MAX_PIECE_CHARS) {
        yield { start: m.index, end: m.index + s.length, ids: this.encodePiece(s) };
        continue;
      }
      for (const [start, end] of QwenTokenizer.cut(s, m.index)) yield { start, end, ids: this.encodePiece(text.slice(start, end)) };
    }
  }

  *pieces(text: string): Generator<Piece> {
    for (const { start, end, ids } of this.segments(text)) yield { start, end, tokens: ids.length };
  }

  encode(text: string): number[] {
    const out: number[] = [];
    for (const { ids } of this.segments(text)) for (const id of ids) out.push(id);
    return out;
  }

  count(text: string): number {
    let n = 0;
    for (const p of this.pieces(text)) n += p.tokens;
    return n;
  }

  decode(ids: readonly number[]): string {
    // Some libraries throw on an empty list; no ids are the empty text.
    if (ids.length === 0) return '';
    return this.inner.decode(ids, { skip_special_tokens: false });
  }
}

let loadingBpe: Promise<QwenBpe> | undefined;
let loading: Promise<QwenTokenizer> | undefined;

/** The BPE alone (its ranks are a 1.6 MB lazily loaded module), shared by every QwenTokenizer made from it. */
export function loadQwenBpe(): Promise<QwenBpe> {
  // The attribute lets node load the data as it is (the CLI, test servers); bundlers accept it too.
  loadingBpe ??= Promise.all([import('./qwen-ranks.json', { with: { type: 'json' } }), import('gpt-tokenizer/BytePairEncodingCore')]).then(
    ([ranks, core]) => new QwenBpe(ranks.default as QwenRanks, core.BytePairEncodingCore),
  );
  return loadingBpe;
}

/** Loads the tokenizer once (a 1.6 MB module and about 15 MB of memory); call it only where it is needed. */
export function loadQwenTokenizer(): Promise<QwenTokenizer> {
  loading ??= loadQwenBpe().then((bpe) => new QwenTokenizer(bpe));
  return loading;
}
