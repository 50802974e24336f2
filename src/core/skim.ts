import type { ChunkSpan } from './chunker';
import { fold } from './fold';
import type { ReadReason } from './read-reason';

/**
 * Skim mode: rank chunks by relevance to the question with BM25, weighted
 * toward the question's entities, and read only the best share of them plus
 * their neighbours, in document order. SkimFollower (skim-follow.ts) adds the
 * chunks that names in the memory point to as the run goes.
 */

export interface SkimOptions {
  /** Share of chunks to read by rank, before neighbours are added (0–1]. */
  keep: number;
  /** Chunks on each side of a selected one that are read too. */
  neighbours: number;
}

export const DEFAULT_SKIM: SkimOptions = { keep: 0.05, neighbours: 1 };

const K1 = 1.2;
const B = 0.75;
const ENTITY_WEIGHT = 3;

// Words, numbers and hyphenated keys ("quiet-river", "4829137"), a letter's accents written apart included; runs of Han or kana as bigrams.
const WORD = /[\p{L}\p{N}][\p{L}\p{M}\p{N}]*(?:[-'’][\p{L}\p{N}][\p{L}\p{M}\p{N}]*)*/gu;
const CJK = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}]/u;
const POSSESSIVE = /['’]s$/;
export const STOP = new Set(
  'a an and are as at be by did do does for from had has have how i in is it its of on or that the their there these this to was were what when where which who why will with you your'.split(
    ' ',
  ),
);

/** A word as a search term: folded (core/fold: "Karatáev" finds "Karataev"), curly apostrophes straight, a possessive "'s" dropped ("Ortiz's" finds "Ortiz"). */
function term(word: string): string {
  return fold(word).replace(/’/g, "'").replace(POSSESSIVE, '');
}

/** Search terms of a text: lower-cased words, hyphenated keys also as their parts. */
export function skimTerms(text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(WORD)) {
    const w = term(m[0]);
    if (CJK.test(w)) {
      for (let i = 0; i + 1 < w.length; i++) out.push(w.slice(i, i + 2));
      continue;
    }
    if (STOP.has(w)) continue;
    out.push(w);
    if (w.includes('-')) for (const part of w.split('-')) if (part && !STOP.has(part)) out.push(part);
  }
  return out;
}

/** A name as written (`name`) and as a search term (`term`). */
export interface NameMention {
  name: string;
  term: string;
}

/**
 * Words of a text that name something: capitalised words not at a sentence
 * start, numbers and hyphenated keys, in order of appearance.
 */
export function nameMentions(text: string): NameMention[] {
  const out: NameMention[] = [];
  for (const m of text.matchAll(WORD)) {
    const w = m[0];
    const atStart = m.index === 0 || /[.!?]\s*$/.test(text.slice(Math.max(0, m.index - 3), m.index));
    if ((/^\p{Lu}/u.test(w) && !atStart) || /\p{N}/u.test(w) || w.includes('-')) {
      const name = w.replace(/['’]s$/, '');
      out.push({ name, term: term(w) });
    }
  }
  return out;
}

/**
 * Terms that name something: capitalised words not at a sentence start,
 * numbers, hyphenated keys and quoted phrases. They weigh more in the ranking.
 */
export function entityTerms(text: string): Set<string> {
  const out = new Set(nameMentions(text).map((m) => m.term));
  for (const m of text.matchAll(/["“']([^"”']{2,60})["”']/g)) for (const t of skimTerms(m[1]!)) out.add(t);
  return out;
}

/** A text as a weighted query: its entities weigh more than its other words. */
export function queryOf(text: string): Map<string, number> {
  const entities = entityTerms(text);
  const query = new Map<string, number>();
  for (const t of skimTerms(text)) query.set(t, Math.max(query.get(t) ?? 0, entities.has(t) ? ENTITY_WEIGHT : 1));
  return query;
}

/** Term counts of every chunk of a book: built once, then shared by the ranking and by following names. */
export class SkimIndex {
  private readonly tf: Map<string, number>[];
  private readonly lengths: number[];
  private readonly df = new Map<string, number>();
  private readonly avgLength: number;

  constructor(
    text: string,
    readonly chunks: readonly ChunkSpan[],
  ) {
    this.tf = chunks.map((c) => {
      const counts = new Map<string, number>();
      for (const t of skimTerms(text.slice(c.start, c.end))) counts.set(t, (counts.get(t) ?? 0) + 1);
      for (const t of counts.keys()) this.df.set(t, (this.df.get(t) ?? 0) + 1);
      return counts;
    });
    this.lengths = this.tf.map((m) => [...m.values()].reduce((a, b) => a + b, 0));
    this.avgLength = this.lengths.reduce((a, b) => a + b, 0) / Math.max(1, this.lengths.length);
  }

  get size(): number {
    return this.chunks.length;
  }

  /** Chunks that hold `term`. */
  chunksWith(term: string): number {
    return this.df.get(term) ?? 0;
  }

  /** How specific a term is: high when few chunks hold it, 0 when none does. */
  idf(term: string): number {
    const df = this.df.get(term) ?? 0;
    return df === 0 ? 0 : Math.log(1 + (this.chunks.length - df + 0.5) / (df + 0.5));
  }

  /** Indexes of the chunks holding `term`, in document order. */
  where(term: string): number[] {
    const out: number[] = [];
    if (!this.df.has(term)) return out;
    this.tf.forEach((counts, i) => counts.has(term) && out.push(i));
    return out;
  }

  /** BM25 score of every chunk against a weighted query. */
  scores(query: ReadonlyMap<string, number>): number[] {
    const idf = new Map([...query.keys()].map((t) => [t, this.idf(t)]));
    return this.tf.map((counts, i) => {
      let score = 0;
      const norm = K1 * (1 - B + (B * this.lengths[i]!) / (this.avgLength || 1));
      for (const [t, weight] of query) {
        const f = counts.get(t);
        if (f) score += weight * idf.get(t)! * ((f * (K1 + 1)) / (f + norm));
      }
      return score;
    });
  }
}

/** A chunk a skim reads, with why. */
export interface PlannedIndex {
  index: number;
  reason: ReadReason;
}

export class SkimPlanner {
  private readonly query: Map<string, number>;

  constructor(
    readonly index: SkimIndex,
    question: string,
    readonly options: SkimOptions = DEFAULT_SKIM,
  ) {
    this.query = queryOf(question);
  }

  /** BM25 score of every chunk against the question. */
  scores(): number[] {
    return this.index.scores(this.query);
  }

  /**
   * Chunks to read, in document order: the top share by score ("ranked") and
   * their neighbours; with no match at all, the start of the book.
   */
  plan(): PlannedIndex[] {
    const scores = this.scores();
    const n = scores.length;
    const top = Math.max(1, Math.ceil(n * this.options.keep));
    const ranked = scores
      .map((s, i) => [s, i] as const)
      .filter(([s]) => s > 0)
      .sort((a, b) => b[0] - a[0] || a[1] - b[1])
      .slice(0, top)
      .map(([, i]) => i);
    const chosen = new Map<number, ReadReason>();
    for (const i of ranked) chosen.set(i, { by: 'ranked' });
    for (const i of ranked) {
      for (let j = i - this.options.neighbours; j <= i + this.options.neighbours; j++) {
        if (j >= 0 && j < n && !chosen.has(j)) chosen.set(j, { by: 'neighbour' });
      }
    }
    if (chosen.size === 0) for (let j = 0; j < Math.min(n, top); j++) chosen.set(j, { by: 'start' });
    return [...chosen].sort((a, b) => a[0] - b[0]).map(([index, reason]) => ({ index, reason }));
  }

  /** The chunk indexes of plan(). */
  select(): number[] {
    return this.plan().map((p) => p.index);
  }
}
