/**
 * The questions of one `memagent read`: from --question (any number of
 * times) and --questions-file, and where each one's journal lies when there
 * are several.
 */
import { existsSync, readFileSync } from 'node:fs';
import { UsageError } from './flags';

export interface QuestionFlags {
  question?: string[];
  'questions-file'?: string;
}

/**
 * The questions the flags give, in order: every --question, then the file's
 * lines (blank ones skipped), each trimmed. None is a valid answer here: a
 * resume may take them from its journals.
 */
export function gatherQuestions(v: QuestionFlags): string[] {
  const given = (v.question ?? []).map((q) => q.trim());
  const file = v['questions-file'];
  if (file !== undefined) {
    if (!existsSync(file)) throw new UsageError(`There is no questions file ${file}.`);
    const lines = readFileSync(file, 'utf8')
      .split('\n')
      .map((l) => l.trim())
      .filter(Boolean);
    if (lines.length === 0) throw new UsageError(`${file} holds no question: write one question a line.`);
    given.push(...lines);
  }
  // One empty question is the single read's to refuse, in its own words.
  if (given.length > 1 && given.some((q) => !q)) throw new UsageError('A --question is empty: give each question its words.');
  const seen = new Set<string>();
  for (const q of given) {
    // Two loops for one question would write two equal journals: a slip, most likely.
    if (seen.has(q)) throw new UsageError(`The question "${q}" is given twice: ask each question once.`);
    seen.add(q);
  }
  return given;
}

/** The suffixes a journal name keeps at its end, the question's number going before them. */
const SUFFIXES = ['.memagent.jsonl', '.infmem.jsonl', '.jsonl'];

/**
 * The journal of question `n` (from 1) of a read of several: `book.txt.memagent.jsonl`
 * becomes `book.txt.q2.memagent.jsonl` (InfMem's `book.txt.infmem.jsonl` `book.txt.q2.infmem.jsonl`), `read.jsonl` `read.q2.jsonl`, any other name `NAME.q2`.
 */
export function questionJournal(out: string, n: number): string {
  const suffix = SUFFIXES.find((s) => out.toLowerCase().endsWith(s) && out.length > s.length);
  return suffix ? `${out.slice(0, -suffix.length)}.q${n}${out.slice(-suffix.length)}` : `${out}.q${n}`;
}

/** The journals of a read of several questions that `out` names, q1, q2, … while they exist. */
export function questionJournalsOnDisk(out: string, from = 1): string[] {
  const found: string[] = [];
  for (let n = from; existsSync(questionJournal(out, n)); n++) found.push(questionJournal(out, n));
  return found;
}
