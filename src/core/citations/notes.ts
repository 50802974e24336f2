import { sentenceSpans } from '../text';
import { keysOf } from './keys';

/** One thing a memory (or an answer) says: a sentence, a line of a list, or a clause between semicolons. */
export interface Note {
  text: string;
  /** Where it is in the text it was split from. */
  start: number;
  end: number;
}

// A list's marker at the start of a line: "- ", "* ", "• ", "1. ", "2) ".
const BULLET = /^\s*(?:[-*•·]|\d{1,3}[.)])\s+/;
// Clauses a note-taker strings together: "; " and the full-width "；".
const CLAUSE = /;\s+|；/g;
/** A clause is a note of its own only where each clause of its sentence says this much (keys): "you have travelled; you have…" stays whole. */
const CLAUSE_KEYS = 3;

/**
 * The notes of a memory, in order. Memories are written as lists as often as
 * prose, so each line stands alone (unlike a book, where a single line break is
 * a hard wrap); within a line, each sentence is a note, and so is each clause
 * between semicolons where every clause of it is a fact of its own.
 */
export function splitNotes(text: string): Note[] {
  const notes: Note[] = [];
  let lineStart = 0;
  for (const line of text.split('\n')) {
    const bullet = BULLET.exec(line)?.[0].length ?? 0;
    const body = line.slice(bullet);
    for (const s of sentenceSpans(body)) {
      const sentence = body.slice(s.start, s.end);
      const cuts = [...sentence.matchAll(CLAUSE)];
      const pieces: { from: number; to: number }[] = [];
      let at = s.start;
      for (const m of [...cuts, null]) {
        const to = m ? s.start + m.index : s.end;
        pieces.push({ from: at, to });
        if (m) at = to + m[0].length;
      }
      const split = pieces.length > 1 && pieces.every((p) => keysOf(body.slice(p.from, p.to)).length >= CLAUSE_KEYS);
      for (const p of split ? pieces : [{ from: s.start, to: s.end }]) {
        const piece = body.slice(p.from, p.to);
        const lead = piece.length - piece.trimStart().length;
        const trimmed = piece.trim();
        if (trimmed) notes.push({ text: trimmed, start: lineStart + bullet + p.from + lead, end: lineStart + bullet + p.from + lead + trimmed.length });
      }
    }
    lineStart += line.length + 1;
  }
  return notes;
}
