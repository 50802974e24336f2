import { sentenceSpans } from '../text';
import { isCjkKey, isNumberKey, keyShape, keysOf, nameKeys } from './keys';
import { type Note, splitNotes } from './notes';
import { type Citation, isNoAnswer, merge, type NoteTrace, type Sources, type TraceInput, type Unsourced } from './citation';
import { KeyTimeline, staysOf } from './timeline';
import { heldByAnswer } from './held';

/**
 * Citations traced through a run's memory. An answer is matched to the notes
 * of the memory it was written from (by their keys: content words, names,
 * numbers and dates however written); notes that link the answer's note to
 * the question by a name are taken too, so an answer whose pieces came from
 * several chunks cites each piece. Each note is then followed back through
 * the revisions: its keys' stays in the memory say at which revisions its
 * content was written down (the last stay first: written down and kept since;
 * an earlier one where the content left and came back), and the sentence of
 * that revision's section holding that content is the citation. A note that
 * no section supports is said to have no source in the book.
 *
 * Model-free and deterministic; a memory's lines are keyed once however many
 * revisions repeat them.
 */

/** How much a key the question holds counts: the question may have put it in the memory, not the book. */
const QUESTION_SHARE = 0.35;
/** How much content counts that was written down at an earlier stay, left the memory and came back. */
const EARLIER_STAY = 0.8;
/** A citation must account for this share of a note's own content ... */
const MIN_GAIN = 0.2;
/** ... in a sentence that holds this share of the note. */
const MIN_MATCH = 0.3;
/** A note is sourced enough once this share of its own content is cited. */
const ENOUGH = 0.75;
/** Revisions tried per note, those where most of its content was written down first. */
const MAX_CANDIDATES = 8;
/** An answer's further note must add this share of its content (or a name or number). */
const CLAIM_PICK = 0.15;
/** Below this share of an answer's content in the memory, the answer says what the memory does not hold. */
const CLAIM_HELD = 0.4;
/** A note reached from the answer's by names joins it where it adds this share of the question, or this share of what is still open. */
const BRIDGE_GAIN = 0.15;
const BRIDGE_OPEN = 0.5;
const BRIDGE_DEPTH = 3;
/** A name shared by at most this many notes links them; a commoner one links nothing in particular. */
const LINK_NOTES = 3;
/** Words of the answer step's own phrasing, not of the facts. */
const ANSWER_WORDS = new Set(['answer', 'memory', 'therefore', 'boxed']);

/** A memory's notes and the weights of their keys. */
interface MemoryView {
  revision: number;
  notes: Note[];
  keys: Set<string>[];
  names: Set<string>;
  /** How much a key says: rarer among the notes and name-like weighs more. */
  weight(key: string): number;
  /** Notes holding a key. */
  df(key: string): number;
}

interface SectionSentences {
  /** The sentences of the section and of the passages read with it, by their places in the run's text. */
  sentences: { start: number; end: number; text: string }[];
  keys: Set<string>[];
}

interface Option {
  revision: number;
  sentence: number | null;
  gain: number;
  match: number;
  covers: Set<string>;
}

/** A revision that may have written a note down: what it is credited with, against the note's keys not yet accounted for. */
interface CandidateRevision {
  revision: number;
  credits: Map<string, number>;
  uncovered: Set<string>;
}

/** One note's keys and how much each counts. */
interface NoteWeights {
  keys: readonly string[];
  /** The keys that carry the note's content. */
  core: Set<string>;
  weight: (k: string) => number;
  total: number;
  coreTotal: number;
}

export class Tracer {
  private readonly timeline: KeyTimeline;
  private readonly sections = new Map<number, SectionSentences | null>();
  private readonly questionKeys: Set<string>;

  constructor(private readonly input: TraceInput) {
    this.timeline = new KeyTimeline(input.memories);
    this.questionKeys = new Set(keysOf(input.question).filter((k) => !ANSWER_WORDS.has(k)));
  }

  /** The sources of `answer`, written from the memory of revision `last` (the run's last by default). */
  async citeAnswer(answer: string, last = this.input.memories.length - 1): Promise<Sources> {
    if (isNoAnswer(answer)) return { citations: [], unsourced: [] };
    if (last < 0) return { citations: [], unsourced: answerClaims(answer).length ? [{ text: answer.trim(), reason: 'answer' }] : [] };
    const view = this.view(last, answer);
    const { picked, claimed, unsourced } = this.select(answer, view);
    // A source is listed only where the answer holds what it cites.
    const held = { answer: new Set(keysOf(answer)), fromAnswer: picked.map((i) => claimed.has(i)), names: view.names };
    const traces = heldByAnswer(await this.traceNotes(view, picked), held);
    for (const t of traces) if (t.citations.length === 0) unsourced.push({ text: t.note.text, reason: 'memory' });
    return { citations: merge(traces.flatMap((t) => t.citations)), unsourced };
  }

  /** Where each note of the memory of revision `revision` came from. */
  traceMemory(revision: number): Promise<NoteTrace[]> {
    const view = this.view(revision, '');
    return this.traceNotes(
      view,
      view.notes.map((_, i) => i).filter((i) => view.keys[i]!.size > 0),
    );
  }

  private view(revision: number, answer: string): MemoryView {
    const memory = this.input.memories[revision] ?? '';
    const notes = splitNotes(memory);
    const keys = notes.map((n) => new Set(keysOf(n.text)));
    const counts = new Map<string, number>();
    for (const set of keys) for (const k of set) counts.set(k, (counts.get(k) ?? 0) + 1);
    const names = nameKeys([memory, this.input.question, answer]);
    const n = notes.length;
    const df = (key: string) => counts.get(key) ?? 0;
    return { revision, notes, keys, names, df, weight: (key) => Math.log(1 + (n + 1) / (df(key) + 0.5)) * keyShape(key, names) };
  }

  /**
   * The notes an answer rests on: for each of its claims, the notes that hold
   * most of its keys; then notes linked to those by a name that hold what the
   * question asks about and they do not (the first hops of a multi-hop answer).
   */
  private select(answer: string, view: MemoryView): { picked: number[]; claimed: Set<number>; unsourced: Unsourced[] } {
    const picked = new Set<number>();
    const unsourced: Unsourced[] = [];
    const held = new Set<string>();
    for (const set of view.keys) for (const k of set) held.add(k);
    const questionWeight = (i: number) => sum(this.questionKeys, (k) => (view.keys[i]!.has(k) ? view.weight(k) : 0));

    for (const claim of answerClaims(answer)) {
      const keys = new Set(keysOf(claim).filter((k) => !ANSWER_WORDS.has(k)));
      if (keys.size === 0) continue;
      const total = sum(keys, view.weight);
      const uncovered = new Set([...keys].filter((k) => held.has(k)));
      const chosen: number[] = [];
      for (;;) {
        let best = -1;
        let bestScore = 0;
        let bestGain = 0;
        let bestStrong = false;
        let bestCount = 0;
        view.keys.forEach((set, i) => {
          let gain = 0;
          let count = 0;
          let strong = false;
          for (const k of uncovered) {
            if (!set.has(k)) continue;
            gain += view.weight(k);
            count++;
            strong ||= view.names.has(k) || (isNumberKey(k) && k.length > 1);
          }
          // Between notes that hold as much of the claim, the one nearer the question.
          const score = gain * (1 + questionWeight(i) / (1 + gain));
          if (gain > 0 && score > bestScore) [best, bestScore, bestGain, bestStrong, bestCount] = [i, score, gain, strong, count];
        });
        if (best < 0) break;
        const enough = bestGain >= CLAIM_PICK * total || bestStrong;
        // A first note must hold a name, a number, two of the claim's words, or its only one.
        const firm = bestStrong || bestCount >= 2 || keys.size === 1;
        if (!enough || (chosen.length === 0 && !firm)) break;
        chosen.push(best);
        for (const k of view.keys[best]!) uncovered.delete(k);
      }
      const coveredWeight =
        total -
        sum(uncovered, view.weight) -
        sum(
          [...keys].filter((k) => !held.has(k)),
          view.weight,
        );
      if (chosen.length && coveredWeight >= CLAIM_HELD * total) for (const i of chosen) picked.add(i);
      else if (keys.size >= 2 || [...keys].some((k) => view.names.has(k) || isNumberKey(k))) unsourced.push({ text: claim, reason: 'answer' });
    }
    const claimed = new Set(picked);
    this.bridge(view, picked);
    return { picked: [...picked].sort((a, b) => a - b), claimed, unsourced };
  }

  /** Adds to `picked` the notes, reached from it through what they share, that hold what the question asks and `picked` does not. */
  private bridge(view: MemoryView, picked: Set<number>): void {
    if (picked.size === 0) return;
    const asked = [...this.questionKeys].filter((k) => view.df(k) > 0);
    const askedWeight = sum(asked, view.weight);
    // Two notes are linked by a name, number or Chinese pair few notes share, or by a phrase of two words few notes share ("blue lacquer").
    const isLink = (k: string) =>
      !this.questionKeys.has(k) && view.df(k) <= LINK_NOTES && (view.names.has(k) || (isNumberKey(k) && k.length > 1) || isCjkKey(k));
    const byKey = new Map<string, number[]>();
    const add = (k: string, i: number) => byKey.set(k, [...(byKey.get(k) ?? []), i]);
    const phrases = view.notes.map((n) => phrasesOf(n.text, this.questionKeys));
    view.keys.forEach((set, i) => {
      for (const k of set) if (isLink(k)) add(k, i);
      for (const p of phrases[i]!) add(p, i);
    });
    const linked = (i: number): number[] => {
      const out = new Set<number>();
      for (const k of [...view.keys[i]!, ...phrases[i]!]) {
        const notes = byKey.get(k) ?? [];
        if (notes.length <= LINK_NOTES) for (const j of notes) if (j !== i) out.add(j);
      }
      return [...out];
    };
    for (let round = 0; round < BRIDGE_DEPTH; round++) {
      const covered = new Set<string>();
      for (const i of picked) for (const k of view.keys[i]!) covered.add(k);
      const open = asked.filter((k) => !covered.has(k));
      if (open.length === 0) return;
      // Breadth first from the picked notes, through names.
      const from = new Map<number, number>();
      let frontier = [...picked];
      const reached: { note: number; depth: number }[] = [];
      for (let depth = 1; depth <= BRIDGE_DEPTH && frontier.length; depth++) {
        const next: number[] = [];
        for (const i of frontier) {
          for (const j of linked(i)) {
            if (picked.has(j) || from.has(j)) continue;
            from.set(j, i);
            next.push(j);
            reached.push({ note: j, depth });
          }
        }
        frontier = next;
      }
      let best: { note: number; depth: number; gain: number } | null = null;
      for (const r of reached) {
        const gain = sum(open, (k) => (view.keys[r.note]!.has(k) ? view.weight(k) : 0));
        if (gain > 0 && (!best || gain > best.gain || (gain === best.gain && r.depth < best.depth))) best = { ...r, gain };
      }
      if (!best || (best.gain < BRIDGE_GAIN * askedWeight && best.gain < BRIDGE_OPEN * sum(open, view.weight))) return;
      for (let i: number | undefined = best.note; i !== undefined && !picked.has(i); i = from.get(i)) picked.add(i);
    }
  }

  private async traceNotes(view: MemoryView, indexes: readonly number[]): Promise<NoteTrace[]> {
    const wanted = new Set<string>();
    for (const i of indexes) for (const k of view.keys[i]!) wanted.add(k);
    const presence = this.timeline.presence(wanted, view.revision);
    const out: NoteTrace[] = [];
    for (const i of indexes) out.push({ note: view.notes[i]!, citations: await this.traceNote(view, i, presence) });
    return out;
  }

  /** The revisions and sentences a note's content was drawn from, most of it first. */
  private async traceNote(view: MemoryView, index: number, presence: Map<string, Uint8Array>): Promise<Citation[]> {
    const keys = [...view.keys[index]!];
    const weight = (k: string) => view.weight(k) * (this.questionKeys.has(k) ? QUESTION_SHARE : 1);
    const own = keys.filter((k) => !this.questionKeys.has(k));
    const core = new Set(own.length ? own : keys);
    const total = sum(keys, weight);
    const coreTotal = sum(core, weight);

    // What each revision wrote down of this note, by key: credit for the stay kept since, less for an earlier one.
    const entered = new Map<number, Map<string, number>>();
    const kept = new Set<number>();
    for (const k of keys) {
      for (const stay of staysOf(presence.get(k)!)) {
        let at = entered.get(stay.from);
        if (!at) entered.set(stay.from, (at = new Map()));
        at.set(k, weight(k) * (stay.kept ? 1 : EARLIER_STAY));
        if (stay.kept && core.has(k)) kept.add(stay.from);
      }
    }
    const candidates = [...entered]
      .map(([revision, credits]) => ({ revision, credit: sum(core, (k) => credits.get(k) ?? 0) }))
      .filter((c) => c.credit >= MIN_GAIN * coreTotal)
      .sort((a, b) => b.credit - a.credit || b.revision - a.revision)
      .slice(0, MAX_CANDIDATES)
      .map((c) => c.revision);

    const uncovered = new Set(keys);
    const citations: Citation[] = [];
    const tried = new Set<number>();
    while (
      sum(
        [...uncovered].filter((k) => core.has(k)),
        weight,
      ) >
      (1 - ENOUGH) * coreTotal
    ) {
      let best: Option | null = null;
      for (const revision of candidates) {
        if (tried.has(revision)) continue;
        const option = await this.bestSentence({ revision, credits: entered.get(revision)!, uncovered }, { core, keys, weight, total, coreTotal });
        if (option && (!best || better(option, best))) best = option;
      }
      if (!best) break;
      tried.add(best.revision);
      for (const k of best.covers) uncovered.delete(k);
      const citation: Citation = { revision: best.revision, keptUntil: view.revision, notes: [view.notes[index]!.text] };
      if (!kept.has(best.revision) && kept.size > 0) citation.returned = true;
      if (best.sentence !== null) {
        const found = (await this.sentencesOf(best.revision))!;
        const sentence = found.sentences[best.sentence]!;
        citation.sentence = { start: sentence.start, end: sentence.end, text: sentence.text.replace(/\s+/g, ' ') };
      }
      citations.push(citation);
    }
    return citations;
  }

  /** The sentence of revision `revision`'s section that best accounts for what it wrote down of a note, if one does. */
  private async bestSentence(
    { revision, credits, uncovered }: CandidateRevision,
    { core, keys, weight, total, coreTotal }: NoteWeights,
  ): Promise<Option | null> {
    const found = await this.sentencesOf(revision);
    if (!found) {
      // Without the book, the revision that wrote the content down is what can be said.
      const covers = new Set([...credits.keys()].filter((k) => uncovered.has(k)));
      const gain = sum(
        [...covers].filter((k) => core.has(k)),
        (k) => credits.get(k)!,
      );
      return gain >= MIN_GAIN * coreTotal ? { revision, sentence: null, gain, match: 0, covers } : null;
    }
    let best: Option | null = null;
    found.keys.forEach((sentenceKeys, i) => {
      let gain = 0;
      for (const k of uncovered) if (core.has(k) && sentenceKeys.has(k)) gain += credits.get(k) ?? 0;
      if (gain < MIN_GAIN * coreTotal) return;
      const match = sum(keys, (k) => (sentenceKeys.has(k) ? weight(k) : 0)) / total;
      if (match < MIN_MATCH) return;
      const option = { revision, sentence: i, gain, match, covers: new Set(keys.filter((k) => sentenceKeys.has(k))) };
      if (!best || better(option, best)) best = option;
    });
    return best;
  }

  private async sentencesOf(revision: number): Promise<SectionSentences | null> {
    let found = this.sections.get(revision);
    if (found === undefined) {
      const section = await this.input.section(revision);
      if (section) {
        const sentences = [section, ...(section.passages ?? [])].flatMap((piece) =>
          sentenceSpans(piece.text).map((s) => ({ start: piece.start + s.start, end: piece.start + s.end, text: piece.text.slice(s.start, s.end) })),
        );
        found = { sentences, keys: sentences.map((s) => new Set(keysOf(s.text))) };
      } else found = null;
      this.sections.set(revision, found);
    }
    return found;
  }
}

/** Whether `a` is the better citation: it accounts for more, then matches the note better, then was written later. */
function better(a: Option, b: Option): boolean {
  if (Math.abs(a.gain - b.gain) > 1e-9) return a.gain > b.gain;
  if (Math.abs(a.match - b.match) > 1e-9) return a.match > b.match;
  return a.revision > b.revision;
}

/** Pairs of words that follow each other in a note ("blue lacquer"), but for pairs of the question's words: what a phrase links. */
function phrasesOf(text: string, question: ReadonlySet<string>): Set<string> {
  const keys = keysOf(text);
  const out = new Set<string>();
  for (let i = 1; i < keys.length; i++) {
    const [a, b] = [keys[i - 1]!, keys[i]!];
    if (a !== b && !(question.has(a) && question.has(b)) && !isNumberKey(a) && !isNumberKey(b)) out.add(`${a} ${b}`);
  }
  return out;
}

/** The claims of an answer: its notes (sentences, list lines, clauses). */
function answerClaims(answer: string): string[] {
  return splitNotes(answer).map((n) => n.text);
}

function sum<T>(items: Iterable<T>, value: (item: T) => number): number {
  let total = 0;
  for (const item of items) total += value(item);
  return total;
}
