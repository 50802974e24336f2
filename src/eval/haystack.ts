import { sentenceSpans } from '../core/text';
import type { Tokenizer } from '../core/tokenizer';

/**
 * A run of document text that starts with one space and ends with something
 * other than white space. Qwen's pre-tokenizer never lets a piece cross such a
 * boundary, so a document made of segments has exactly the sum of their token
 * counts: documents of a million tokens are measured without encoding them.
 */
export interface Segment {
  text: string;
  tokens: number;
}

/** `text` as a segment's text: one leading space, white space collapsed. */
function segmentText(text: string): string {
  return ` ${text.trim().replace(/\s+/g, ' ')}`;
}

export function segment(text: string, tokenizer: Tokenizer): Segment {
  const s = segmentText(text);
  return { text: s, tokens: tokenizer.count(s) };
}

/** Text the needles hide in: its sentences, read in a cycle for as long as a document needs. */
export class Haystack {
  private readonly counts = new WeakMap<Tokenizer, Int32Array>();

  /** Each sentence as a segment (leading space, collapsed white space). */
  readonly sentences: readonly string[];

  constructor(
    readonly name: string,
    sentences: readonly string[],
  ) {
    this.sentences = sentences.map(segmentText).filter((s) => s.length > 1);
    if (this.sentences.length === 0) throw new Error(`The haystack "${name}" has no sentences.`);
  }

  /** Sentences of a book or any document, as ingestion reads it (header and footer already cut). */
  static fromText(name: string, text: string): Haystack {
    const sentences = sentenceSpans(text)
      .map((s) => text.slice(s.start, s.end))
      // A sentence that reads like a needle would be a second, unplanned answer.
      .filter((s) => !/special magic/i.test(s));
    return new Haystack(name, sentences);
  }

  /** Token counts of the sentences, counted once per tokenizer. */
  tokens(tokenizer: Tokenizer): Int32Array {
    let counts = this.counts.get(tokenizer);
    if (!counts) {
      counts = Int32Array.from(this.sentences, (s) => tokenizer.count(s));
      this.counts.set(tokenizer, counts);
    }
    return counts;
  }

  /** An endless stream of its sentences, from sentence `start` on, wrapping at the end. */
  stream(tokenizer: Tokenizer, start = 0): () => Segment {
    const counts = this.tokens(tokenizer);
    const n = this.sentences.length;
    let i = ((start % n) + n) % n;
    return () => {
      const s = { text: this.sentences[i]!, tokens: counts[i]! };
      i = (i + 1) % n;
      return s;
    };
  }
}

/** RULER's "noise" haystack: five plain sentences, repeated. */
export const NOISE = new Haystack('noise', ['The grass is green.', 'The sky is blue.', 'The sun is yellow.', 'Here we go.', 'There and back again.']);

/**
 * Segments from `next` until they hold `budget` tokens. A segment that would
 * overshoot is skipped for a later, shorter one, so the total ends within a
 * few tokens of the budget.
 */
export function fill(next: () => Segment, budget: number): Segment[] {
  const out: Segment[] = [];
  let total = 0;
  let misses = 0;
  while (total < budget && misses < 64) {
    const s = next();
    if (total + s.tokens <= budget) {
      out.push(s);
      total += s.tokens;
      misses = 0;
    } else misses++;
  }
  return out;
}

/** A segment to plant at a relative depth of the filler (0 = start, 1 = end). */
export interface Insert {
  depth: number;
  segment: Segment;
}

/** Where a planted segment ended up. */
export interface Placement {
  /** The planted text, as it appears in the document. */
  text: string;
  /** Its characters in the document: document.slice(start, end) === text. */
  start: number;
  end: number;
  /** Document tokens before it. */
  tokenOffset: number;
  /** The depth it was planted at. */
  depth: number;
}

export interface Assembled {
  document: string;
  tokens: number;
  placements: Placement[];
}

/**
 * Joins filler and planted segments into one document. Each insert goes at
 * the segment boundary nearest its depth (by tokens); inserts at the same
 * boundary keep their order. The document's token count is the sum of its
 * segments', bar the first, whose leading space is dropped and which is
 * counted again.
 */
export function assemble(filler: readonly Segment[], inserts: readonly Insert[], tokenizer: Tokenizer): Assembled {
  const fillerTokens = filler.reduce((n, s) => n + s.tokens, 0);
  const at = inserts
    .map((ins, order) => ({ ins, order, boundary: boundaryAt(filler, fillerTokens, ins.depth) }))
    .sort((a, b) => a.boundary - b.boundary || a.order - b.order);
  const parts: { seg: Segment; insert?: Insert }[] = [];
  let k = 0;
  for (let i = 0; i <= filler.length; i++) {
    while (k < at.length && at[k]!.boundary === i) parts.push({ seg: at[k]!.ins.segment, insert: at[k++]!.ins });
    if (i < filler.length) parts.push({ seg: filler[i]! });
  }

  const texts: string[] = [];
  const placements: Placement[] = [];
  let chars = 0;
  let tokens = 0;
  parts.forEach(({ seg, insert }, i) => {
    const text = i === 0 ? seg.text.trimStart() : seg.text;
    const count = i === 0 ? tokenizer.count(text) : seg.tokens;
    if (insert) {
      const lead = text.length - text.trimStart().length;
      placements.push({ text: text.slice(lead), start: chars + lead, end: chars + text.length, tokenOffset: tokens, depth: insert.depth });
    }
    texts.push(text);
    chars += text.length;
    tokens += count;
  });
  return { document: texts.join(''), tokens, placements: placements.sort((a, b) => a.start - b.start) };
}

/** Index of the first filler segment that starts at or after `depth` of the filler's tokens. */
function boundaryAt(filler: readonly Segment[], total: number, depth: number): number {
  const goal = Math.min(1, Math.max(0, depth)) * total;
  let before = 0;
  for (let i = 0; i < filler.length; i++) {
    if (before >= goal) return i;
    before += filler[i]!.tokens;
  }
  return filler.length;
}
