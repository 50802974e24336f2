import { NO_ANSWER_REPLY } from '../../core/prompts';
import { terms } from '../../core/text';

/** A sentence of the memory, ranked against the question. */
export interface Candidate {
  text: string;
  order: number;
  terms: Set<string>;
  score: number;
}

/** Sentences an answer may join: the best, then the parts and hops it still lacks. */
const MOST = 4;
/** A name held by more memory sentences than this links nothing in particular. */
const LINK_SENTENCES = 3;

/**
 * `sentences` ranked by the question's terms, each weighted by how rare it is among them (IDF); with the weights,
 * so that what an answer still lacks can be weighed the same way.
 */
export function rank(question: string, sentences: readonly string[]): { pool: Candidate[]; idf: Map<string, number> } {
  const seen = new Set<string>();
  const pool: Candidate[] = [];
  for (const text of sentences) {
    if (seen.has(text)) continue;
    seen.add(text);
    pool.push({ text, order: pool.length, terms: new Set(terms(text)), score: 0 });
  }
  const idf = new Map<string, number>();
  for (const t of new Set(terms(question))) {
    const df = pool.reduce((n, c) => n + (c.terms.has(t) ? 1 : 0), 0);
    if (df === 0) continue;
    const weight = Math.log(1 + pool.length / df);
    idf.set(t, weight);
    for (const c of pool) if (c.terms.has(t)) c.score += weight;
  }
  return { pool, idf };
}

/** The capitalised words of a sentence past its first word, lower-cased as terms are: its names. */
function namesOf(text: string): Set<string> {
  const names = new Set<string>();
  const words = text.match(/[\p{L}\p{M}\p{N}'’-]+/gu) ?? [];
  for (const word of words.slice(1)) if (/^\p{Lu}/u.test(word)) for (const t of terms(word)) names.add(t);
  return names;
}

/**
 * The memory sentences a model-free answer is made of, in the memory's order. The best-matching sentence
 * first; then, while under the cap, a sentence that holds question terms the answer still lacks, or one that
 * shares a name with a chosen sentence (the second hop: "X went to Skerry Point" → "the keeper on Skerry
 * Point…"); a sentence that does both goes first, and a linked one before an unlinked one.
 */
/** A share of the best score at which another sentence counts as an equal match. */
const NEAR_BEST = 0.9;

export function chooseSentences(question: string, sentences: readonly string[]): string[] {
  const { pool, idf } = rank(question, sentences);
  const best = [...pool].sort((a, b) => b.score - a.score || a.order - b.order)[0];
  if (!best || best.score <= 0) return [];
  const asked = new Set(idf.keys());
  const names = pool.map((c) => new Set([...namesOf(c.text)].filter((n) => !asked.has(n))));
  const holders = new Map<string, number>();
  for (const set of names) for (const n of set) holders.set(n, (holders.get(n) ?? 0) + 1);

  // Sentences that match about as well as the best are kept too: two that each seem to answer (one may be a
  // decoy planted to look like the answer) are both shown, rather than whichever came first.
  const chosen = [...pool]
    .filter((c) => c === best || c.score >= best.score * NEAR_BEST)
    .sort((a, b) => b.score - a.score || a.order - b.order)
    .slice(0, MOST);
  const covered = new Set(chosen.flatMap((c) => [...c.terms]).filter((t) => asked.has(t)));
  const linkNames = new Set(chosen.flatMap((c) => [...names[c.order]!]));
  while (chosen.length < MOST) {
    let pick: Option | null = null;
    for (const c of pool) {
      if (chosen.includes(c)) continue;
      let lacking = 0;
      for (const t of c.terms) if (asked.has(t) && !covered.has(t)) lacking += idf.get(t)!;
      const linked = [...names[c.order]!].some((n) => linkNames.has(n) && holders.get(n)! <= LINK_SENTENCES);
      if (lacking <= 0 && !linked) continue;
      const option = { c, linked, lacking };
      if (!pick || preferred(option, pick)) pick = option;
    }
    if (!pick) break;
    chosen.push(pick.c);
    for (const t of pick.c.terms) if (asked.has(t)) covered.add(t);
    for (const n of names[pick.c.order]!) linkNames.add(n);
  }
  return chosen.sort((a, b) => a.order - b.order).map((c) => c.text);
}

interface Option {
  c: Candidate;
  linked: boolean;
  lacking: number;
}

/** Both a missing part and a link, then a missing part, then a link; more of what is missing, then the better match. */
function preferred(a: Option, b: Option): boolean {
  const rankOf = (o: Option) => (o.linked && o.lacking > 0 ? 0 : o.lacking > 0 ? 1 : 2);
  if (rankOf(a) !== rankOf(b)) return rankOf(a) < rankOf(b);
  if (a.lacking !== b.lacking) return a.lacking > b.lacking;
  if (a.c.score !== b.c.score) return a.c.score > b.c.score;
  return a.c.order < b.c.order;
}

/** The engine's answer from `sentences`: the best sentence, then those holding the parts of the question it lacks and the second hops it names. */
export function answerFrom(problem: string, sentences: readonly string[], boxed: boolean): string {
  const chosen = chooseSentences(problem, sentences);
  if (chosen.length === 0) return NO_ANSWER_REPLY;
  return boxed ? `From the memory: \\boxed{${chosen.join(' ')}}` : `From the memory, the answer is ${chosen.join(' ')}`;
}
