/**
 * A stand-in for InfMem's planner, of fixed rules and no model, so that every
 * part of the InfMem loop runs without one. It is not InfMem's trained
 * planner: it votes STOP once a memory sentence holds most of the question's
 * key terms, and otherwise asks `retrievesearch` for the question's rarest
 * terms and the names the memory holds that were not searched for yet,
 * never asking a query it asked before.
 */
import { TOOL_NAME } from '../../core/infmem/planner-reply';
import { nameMentions } from '../../core/skim';
import { terms } from '../../core/text';
import { memorySentences, withoutInitial } from './memory-step';

export const STOP_REPLY = 'STOP';
/** The question's rarest terms a query starts from. */
const QUESTION_TERMS = 3;
/** New names of the memory a query adds, the rarest first. */
const MEMORY_NAMES = 2;
/** The share of the key terms one memory sentence must hold for a STOP (rounded up). */
const HELD_SHARE = 2 / 3;

/** What the planner is shown. */
export interface PlannerView {
  question: string;
  memory: string;
  /** The queries asked so far, oldest first. */
  history: readonly string[];
  /** How many of the book's retrieval units hold each term (terms as `terms` of core/text forms them). */
  unitCounts: ReadonlyMap<string, number>;
}

/** How many units hold each term: the rarity the planner ranks query words by. */
export function unitTermCounts(units: readonly string[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const unit of units) for (const t of new Set(terms(unit))) counts.set(t, (counts.get(t) ?? 0) + 1);
  return counts;
}

/** The planner's reply: `STOP`, or one `retrievesearch` call whose arguments are JSON. */
export function plannerReply(view: PlannerView): string {
  const query = plannerQuery(view);
  return query === null ? STOP_REPLY : `✿FUNCTION✿: ${TOOL_NAME}\n✿ARGS✿: ${JSON.stringify({ query })}`;
}

/** The query to ask, or null for a STOP: the memory already answers, or every query left was asked before. */
export function plannerQuery(view: PlannerView): string | null {
  const keys = keyWords(view.question);
  const sentences = memorySentences(withoutInitial(view.memory));
  if (keys.size > 0 && sentences.some((s) => holdsKeys(s, [...keys.keys()]))) return null;

  const rarity = (t: string) => view.unitCounts.get(t) ?? 0;
  // Terms no unit holds cannot be found by a search; the rest, rarest first (ties in the question's order).
  const ranked = [...keys.keys()].filter((t) => rarity(t) > 0).sort((a, b) => rarity(a) - rarity(b));
  const asked = view.history.map(wordSet);
  const searched = new Set(asked.flatMap((s) => [...s]));
  const names = newNames(sentences, { keys, searched, rarity });
  for (const words of refinements(
    ranked.map((t) => keys.get(t)!),
    names,
  )) {
    if (words.length === 0) continue;
    const query = words.join(' ');
    if (!asked.some((s) => sameWords(s, wordSet(query)))) return query;
  }
  return null;
}

/** Whether a sentence holds at least two-thirds of the key terms (all of one or two). */
function holdsKeys(sentence: string, keys: readonly string[]): boolean {
  const held = new Set(terms(sentence));
  return keys.filter((k) => held.has(k)).length >= Math.ceil(keys.length * HELD_SHARE);
}

/**
 * The question's key terms (its content words: `terms`, stopwords out), each with the word as the question
 * writes it, lower-cased: the form the book's BM25 index, which splits on spaces and lower-cases, can match.
 */
function keyWords(question: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const word of question.toLowerCase().match(/[\p{L}\p{N}'’-]+/gu) ?? []) {
    const parts = terms(word);
    // A word of several terms (hyphenated, or a run of CJK) is searched for by each term.
    for (const t of parts) if (!out.has(t)) out.set(t, parts.length === 1 ? word : t);
  }
  return out;
}

interface NameFilter {
  keys: ReadonlyMap<string, string>;
  searched: ReadonlySet<string>;
  rarity: (t: string) => number;
}

/** Names the memory holds (as the skim reads them) that no query held and the question does not: the rarest first. */
function newNames(sentences: readonly string[], f: NameFilter): string[] {
  const found = new Map<string, number>();
  for (const s of sentences) {
    for (const { name, term } of nameMentions(s)) {
      const parts = terms(name);
      if (parts.length === 0 || found.has(term) || f.searched.has(term) || parts.every((p) => f.keys.has(p))) continue;
      const units = Math.min(...parts.map(f.rarity));
      if (units > 0) found.set(term, units);
    }
  }
  return [...found].sort((a, b) => a[1] - b[1]).map(([term]) => term);
}

/**
 * The queries to try, in order: the rarest question terms with the new names; then one more question term at
 * a time; then the first query less one of its question terms, the commonest first.
 */
function* refinements(words: readonly string[], names: readonly string[]): Generator<string[]> {
  const added = names.slice(0, MEMORY_NAMES);
  const base = words.slice(0, QUESTION_TERMS);
  yield [...base, ...added];
  for (let n = QUESTION_TERMS + 1; n <= words.length; n++) yield [...words.slice(0, n), ...added];
  for (let i = base.length - 1; i >= 0; i--) yield [...base.filter((_, j) => j !== i), ...added];
}

/** A query's words as the BM25 index splits them: two queries with the same words retrieve the same units. */
function wordSet(query: string): Set<string> {
  return new Set(query.toLowerCase().split(/\s+/).filter(Boolean));
}

function sameWords(a: ReadonlySet<string>, b: ReadonlySet<string>): boolean {
  return a.size === b.size && [...a].every((w) => b.has(w));
}
