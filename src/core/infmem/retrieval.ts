/**
 * InfMem's retrieval at inference: 500-token units cut inside each
 * 5000-token chunk, one BM25 index over the whole document built before
 * reading (chunks not read yet included), the query split as
 * `query.lower().split()`, the top 4 units joined as `[Retrieved #k] text`.
 */
import { pySplit, pyStrip } from '../pytext';
import { Bm25Okapi } from './bm25';

export const CHUNK_TOKENS = 5000;
export const UNIT_TOKENS = 500;
/** The official evaluation retrieves four units whatever top_k the planner asks for. */
export const RETRIEVED_UNITS = 4;

/** What cutting needs of a tokenizer: ids of a text, and the text of a run of ids. */
export interface TokenCodec {
  encode(text: string): number[];
  decode(ids: readonly number[]): string;
}

/** A run of the document's tokens: [start, end) in token positions, and its decoded text. */
export interface TokenSpan {
  start: number;
  end: number;
  text: string;
}

/** `tokenize(text)` of the official code: Python's lower-casing, then split on Python's whitespace. */
export function bm25Tokens(text: string): string[] {
  return pySplit(text.toLowerCase());
}

/** Consecutive slices of `[from, to)` of at most `size` tokens, each decoded on its own. */
function slices(ids: readonly number[], [from, to]: [number, number], size: number, codec: TokenCodec): TokenSpan[] {
  const out: TokenSpan[] = [];
  for (let start = from; start < to; start += size) {
    const end = Math.min(to, start + size);
    out.push({ start, end, text: codec.decode(ids.slice(start, end)) });
  }
  return out;
}

/** The document cut as the official code cuts it: its chunks, and the units inside each chunk. */
export interface InfmemDocument {
  chunks: TokenSpan[];
  units: (TokenSpan & { chunk: number })[];
}

export function cutDocument(ids: readonly number[], codec: TokenCodec, chunkTokens = CHUNK_TOKENS, unitTokens = UNIT_TOKENS): InfmemDocument {
  const chunks = slices(ids, [0, ids.length], chunkTokens, codec);
  const units = chunks.flatMap((c, chunk) => slices(ids, [c.start, c.end], unitTokens, codec).map((u) => ({ ...u, chunk })));
  return { chunks, units };
}

/** The index over every unit, and the units a query brings back. */
export class UnitIndex {
  private readonly bm25: Bm25Okapi;

  constructor(private readonly units: readonly { text: string }[]) {
    this.bm25 = new Bm25Okapi(units.map((u) => bm25Tokens(u.text)));
  }

  /**
   * The `top` best units for a query: score descending, ties by position
   * (numpy's unstable argsort orders ties by hardware; this is the stable
   * choice). Units scoring 0 still fill the list when fewer score above it.
   */
  retrieve(query: string, top = RETRIEVED_UNITS): number[] {
    return this.search(query, top).units;
  }

  /**
   * The `top` best units (as `retrieve`), and whether the cut fell inside a
   * tie: the last unit kept scores the same as the first one left out, so
   * the official code, whose ties fall as the hardware orders them, may have
   * kept another.
   */
  search(query: string, top = RETRIEVED_UNITS): { units: number[]; tied: boolean } {
    const scores = this.bm25.scores(bm25Tokens(query));
    const order = scores.map((_, i) => i).sort((a, b) => scores[b]! - scores[a]! || a - b);
    const tied = top > 0 && order.length > top && scores[order[top - 1]!] === scores[order[top]!];
    return { units: order.slice(0, top), tied };
  }

  /** The texts of the units, in the order given. */
  texts(indices: readonly number[]): string[] {
    return indices.map((i) => this.units[i]!.text);
  }

  /** The block the writer is given: `[Retrieved #k] text` for each unit, joined by a blank line. */
  block(indices: readonly number[]): string {
    return retrievedBlock(this.texts(indices));
  }
}

/** `[Retrieved #k] text` for each retrieved text, joined by a blank line: the framing is the official code's, the texts the book's. */
export function retrievedBlock(texts: readonly string[]): string {
  return texts.map((text, k) => `[Retrieved #${k + 1}] ${text}`).join('\n\n');
}

/** The document as the official code prepares it: stripped, encoded, cut into chunks and units. */
export function prepareDocument(text: string, codec: TokenCodec): InfmemDocument {
  return cutDocument(codec.encode(pyStrip(text)), codec);
}
