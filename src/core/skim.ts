import type { ChunkSpan } from './chunker';

/**
 * Skim mode: rank chunks by relevance to the question with BM25, weighted
 * toward the question's entities, and read only the best share of them plus
 * their neighbours, in document order. A second pass may add chunks that
 * match entities the memory picked up along the way.
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

// Words, numbers and hyphenated keys ("quiet-river", "4829137"); runs of Han or kana as bigrams.
const WORD = /[\p{L}\p{N}]+(?:[-'][\p{L}\p{N}]+)*/gu;
const CJK = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}]/u;
const STOP = new Set(
  'a an and are as at be by did do does for from had has have how i in is it its of on or that the their there these this to was were what when where which who why will with you your'.split(' '),
);

/** Search terms of a text: lower-cased words, hyphenated keys also as their parts. */
export function skimTerms(text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(WORD)) {
    const w = m[0].toLowerCase();
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

/**
 * Terms that name something: capitalised words not at a sentence start,
 * numbers, hyphenated keys and quoted phrases. They weigh more in the ranking.
 */
export function entityTerms(text: string): Set<string> {
  const out = new Set<string>();
  for (const m of text.matchAll(WORD)) {
    const w = m[0];
    const atStart = m.index === 0 || /[.!?]\s*$/.test(text.slice(Math.max(0, m.index - 3), m.index));
    if ((/^\p{Lu}/u.test(w) && !atStart) || /\p{N}/u.test(w) || w.includes('-')) out.add(w.toLowerCase());
  }
  for (const m of text.matchAll(/["“']([^"”']{2,60})["”']/g)) for (const t of skimTerms(m[1]!)) out.add(t);
  return out;
}

export class SkimPlanner {
  private readonly tf: Map<string, number>[];
  private readonly lengths: number[];
  private readonly df = new Map<string, number>();
  private readonly avgLength: number;
  private readonly query = new Map<string, number>();

  constructor(
    text: string,
    readonly chunks: readonly ChunkSpan[],
    question: string,
    readonly options: SkimOptions = DEFAULT_SKIM,
  ) {
    this.tf = chunks.map((c) => {
      const counts = new Map<string, number>();
      for (const t of skimTerms(text.slice(c.start, c.end))) counts.set(t, (counts.get(t) ?? 0) + 1);
      for (const t of counts.keys()) this.df.set(t, (this.df.get(t) ?? 0) + 1);
      return counts;
    });
    this.lengths = this.tf.map((m) => [...m.values()].reduce((a, b) => a + b, 0));
    this.avgLength = this.lengths.reduce((a, b) => a + b, 0) / Math.max(1, this.lengths.length);
    this.addQuery(question);
  }

  /** Adds a text's terms to the query; its entities weigh more. Returns whether the query grew. */
  addQuery(text: string): boolean {
    const entities = entityTerms(text);
    let grew = false;
    for (const t of skimTerms(text)) {
      const weight = entities.has(t) ? ENTITY_WEIGHT : 1;
      if ((this.query.get(t) ?? 0) < weight) {
        this.query.set(t, weight);
        grew = true;
      }
    }
    return grew;
  }

  /** BM25 score of every chunk against the query. */
  scores(): number[] {
    const n = this.chunks.length;
    return this.tf.map((counts, i) => {
      let score = 0;
      const norm = K1 * (1 - B + (B * this.lengths[i]!) / (this.avgLength || 1));
      for (const [term, weight] of this.query) {
        const f = counts.get(term);
        if (!f) continue;
        const df = this.df.get(term) ?? 0;
        const idf = Math.log(1 + (n - df + 0.5) / (df + 0.5));
        score += weight * idf * ((f * (K1 + 1)) / (f + norm));
      }
      return score;
    });
  }

  /** Chunk indexes to read, in document order: the top share by score and their neighbours. */
  select(): number[] {
    const scores = this.scores();
    const n = scores.length;
    const top = Math.max(1, Math.ceil(n * this.options.keep));
    const ranked = scores
      .map((s, i) => [s, i] as const)
      .filter(([s]) => s > 0)
      .sort((a, b) => b[0] - a[0] || a[1] - b[1])
      .slice(0, top);
    const chosen = new Set<number>();
    for (const [, i] of ranked) {
      for (let j = i - this.options.neighbours; j <= i + this.options.neighbours; j++) if (j >= 0 && j < n) chosen.add(j);
    }
    // With no match at all, the start of the book is the best guess.
    if (chosen.size === 0) for (let j = 0; j < Math.min(n, top); j++) chosen.add(j);
    return [...chosen].sort((a, b) => a - b);
  }

  /**
   * Second pass: the memory after a chunk may name entities the question did
   * not (who "the archivist" is). Adds them to the query and returns the chunks
   * after `after` that the widened ranking selects and `planned` lacks.
   */
  follow(memory: string, after: number, planned: ReadonlySet<number>): number[] {
    const entities = [...entityTerms(memory)];
    if (entities.length === 0 || !this.addQuery(entities.join(' '))) return [];
    return this.select().filter((i) => i > after && !planned.has(i));
  }
}

/**
 * The second pass during a run: after each revision, chunks further on that
 * match entities the memory newly holds join the plan, in document order.
 * `plan` is the list the loop reads; it is changed in place.
 */
export class SkimFollower {
  private readonly planner: SkimPlanner;
  private readonly planned = new Set<number>();
  private readonly indexOf = new Map<number, number>();

  constructor(
    text: string,
    private readonly all: readonly ChunkSpan[],
    question: string,
    memory: string,
    private readonly plan: ChunkSpan[],
    options: SkimOptions,
  ) {
    this.planner = new SkimPlanner(text, all, question, options);
    all.forEach((c, i) => this.indexOf.set(c.start, i));
    for (const c of plan) this.planned.add(this.indexOf.get(c.start) ?? -1);
    this.planner.addQuery([...entityTerms(memory)].join(' ')); // what a resumed run had found so far
  }

  /** Adds the chunks the new memory points to; returns whether the plan changed. */
  follow(memory: string, read: ChunkSpan): boolean {
    const after = this.indexOf.get(read.start) ?? this.all.length;
    const added = this.planner.follow(memory, after, this.planned);
    for (const i of added) {
      this.planned.add(i);
      const span = this.all[i]!;
      const at = this.plan.findIndex((c) => c.start > span.start);
      this.plan.splice(at < 0 ? this.plan.length : at, 0, span);
    }
    return added.length > 0;
  }
}
