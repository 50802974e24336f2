import type { NoteTrace } from './citation';
import { isNumberKey, keysOf } from './keys';

/** What an answer's traces are checked against. */
export interface AnswerHold {
  /** The answer's keys. */
  answer: ReadonlySet<string>;
  /** For each trace, whether its note was matched to the answer's words (false: a first hop the answer was reached through). */
  fromAnswer: readonly boolean[];
  /** The keys that name something (see nameKeys). */
  names: ReadonlySet<string>;
}

/** Two of the words a citation shares, or one name or number, say the same thing; one common word ("dear") does not. */
const SHARED_WORDS = 2;

/**
 * An answer's traces with only the citations the answer holds: what a cited
 * sentence cites (the keys it shares with its note) must be in the answer, a
 * name or number or two of its words (its one word, for an answer of one). A
 * note the answer was reached through by a name (a first hop of a two-part
 * answer) is not in the answer's words: its sentence must hold as much of
 * the note instead. A note of the answer left with no citation it holds has
 * no source found in the book (the caller says so); a first hop left with
 * none is dropped, since the answer does not say it.
 */
export function heldByAnswer(traces: readonly NoteTrace[], { answer, fromAnswer, names }: AnswerHold): NoteTrace[] {
  const enough = Math.min(SHARED_WORDS, Math.max(1, answer.size));
  const out: NoteTrace[] = [];
  traces.forEach((t, i) => {
    if (t.citations.length === 0) return void out.push(t);
    const note = new Set(keysOf(t.note.text));
    const citations = t.citations.filter((c) => {
      // Without the book there is no sentence to hold: the revision that wrote the note down stands.
      if (!c.sentence) return true;
      const shared = [...new Set(keysOf(c.sentence.text))].filter((k) => note.has(k) && (!fromAnswer[i] || answer.has(k)));
      return shared.some((k) => names.has(k) || isNumberKey(k)) || shared.length >= (fromAnswer[i] ? enough : SHARED_WORDS);
    });
    if (citations.length || fromAnswer[i]) out.push({ ...t, citations });
  });
  return out;
}
