import { sentenceSpans } from '../text';

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

/**
 * The notes of a memory, in order. Memories are written as lists as often as
 * prose, so each line stands alone (unlike a book, where a single line break is
 * a hard wrap); within a line, each sentence and each clause between
 * semicolons is a note.
 */
export function splitNotes(text: string): Note[] {
  const notes: Note[] = [];
  let lineStart = 0;
  for (const line of text.split('\n')) {
    const bullet = BULLET.exec(line)?.[0].length ?? 0;
    const body = line.slice(bullet);
    for (const s of sentenceSpans(body)) {
      let at = s.start;
      const sentence = body.slice(s.start, s.end);
      for (const m of [...sentence.matchAll(CLAUSE), null]) {
        const to = m ? s.start + m.index : s.end;
        const piece = body.slice(at, to);
        const lead = piece.length - piece.trimStart().length;
        const trimmed = piece.trim();
        if (trimmed) notes.push({ text: trimmed, start: lineStart + bullet + at + lead, end: lineStart + bullet + at + lead + trimmed.length });
        if (m) at = to + m[0].length;
      }
    }
    lineStart += line.length + 1;
  }
  return notes;
}
