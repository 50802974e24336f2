/**
 * The journals of a read of several questions, one per question: found from
 * the command line, checked against it and against each other before a
 * resume, or cleared for a new read.
 */
import { existsSync, statSync, unlinkSync } from 'node:fs';
import { UsageError } from './flags';
import { type Journal, type JournalHeader, readJournal } from './journal';
import { questionJournal, questionJournalsOnDisk } from './questions';
import { checkResume, type ResumeFlags } from './read-start';
import type { ReadText } from './read-set';

export interface QuestionJournalFlags extends ResumeFlags {
  resume?: boolean;
  force?: boolean;
}

/** What a read of several questions starts from: each question's journal, and the ones it continues. */
export interface QuestionJournals<J = Journal> {
  paths: string[];
  /** Each question's journal on disk, in order, for a resume; null for a new read. */
  journals: J[] | null;
}

/** How the journals of one method are read and checked before a resume of several questions. */
export interface JournalKind<J> {
  read(path: string): J;
  question(journal: J): string;
  /** Refuses a journal that this command line would continue wrongly (another book, another cut of it). */
  check(journal: J, path: string): void;
  /** What the journals of one read share, written at once: journals that differ in it were not written together. */
  together(journal: J): string;
}

/** MemAgent's journals of `questions` (see questionJournalsOf). */
export function questionJournals(
  out: string,
  questions: readonly string[],
  { doc, file, v, say }: { doc: ReadText; file: string; v: QuestionJournalFlags; say: (line: string) => void },
): QuestionJournals {
  return questionJournalsOf(
    out,
    questions,
    { v, say },
    {
      read: readJournal,
      question: (j) => j.header.question,
      check: (j, path) => checkResume(j, { out: path, doc, file, question: undefined, v }),
      together: (j) => together(j.header),
    },
  );
}

/**
 * The journals of `questions` (of the ones on disk when a resume names none),
 * checked: a resume continues only journals that were written together for
 * this book and these questions, in this order; a new read replaces journals
 * only with --force.
 */
export function questionJournalsOf<J>(
  out: string,
  questions: readonly string[],
  { v, say }: { v: Pick<QuestionJournalFlags, 'resume' | 'force'>; say: (line: string) => void },
  kind: JournalKind<J>,
): QuestionJournals<J> {
  const paths = questions.length ? questions.map((_, i) => questionJournal(out, i + 1)) : questionJournalsOnDisk(out);
  if (!v.resume) {
    const held = paths.find((p) => existsSync(p) && statSync(p).size > 0);
    if (held && !v.force) throw new UsageError(`${held} already holds a read. Continue it with --resume, start over with --force, or choose another --out.`);
    // A journal numbered past these questions is left from another read: a resume would take it for one of this read's.
    for (const stale of questionJournalsOnDisk(out, paths.length + 1)) {
      unlinkSync(stale);
      say(`Removed ${stale}, a journal of an earlier read with more questions (--force).`);
    }
    return { paths, journals: null };
  }
  const onDisk = paths.filter((p) => existsSync(p));
  // Nothing to continue: a new read, as a resume of one question whose journal is missing starts one, said so.
  if (onDisk.length === 0) {
    say(`--resume: there are no journals to continue (no ${paths[0]} to ${paths.at(-1)}), so this read starts at the first chunk.`);
    return { paths, journals: null };
  }
  const disagree = 'The journals on disk and the questions given disagree';
  const advice = 'Give the questions in the order first given, drop --question and --questions-file to continue every journal, or start over with --force.';
  if (onDisk.length < paths.length) {
    const missing = paths.find((p) => !existsSync(p))!;
    throw new UsageError(`${disagree}: there is no ${missing}, though ${onDisk[0]} is there. ${advice}`);
  }
  const extra = questionJournal(out, paths.length + 1);
  if (existsSync(extra)) throw new UsageError(`${disagree}: ${extra} holds a question beyond the ${paths.length} given. ${advice}`);
  const journals = paths.map((p) => kind.read(p));
  journals.forEach((j, i) => {
    const given = questions[i];
    if (given !== undefined && given !== kind.question(j))
      throw new UsageError(`${disagree}: ${paths[i]} reads for "${kind.question(j)}", not "${given}". ${advice}`);
    kind.check(j, paths[i]!);
  });
  const first = kind.together(journals[0]!);
  journals.forEach((j, i) => {
    if (kind.together(j) !== first)
      throw new UsageError(`${paths[i]} was not written in the same read as ${paths[0]}: the questions of one read go on together. Start over with --force.`);
  });
  return { paths, journals };
}

/** What the journals of one read share: written at once, from one plan (all but the seed, each question's own), one cut of the book and one engine. */
function together(h: JournalHeader): string {
  const { seed: _, ...settings } = h.settings;
  return JSON.stringify([h.createdAt, h.document.hash, h.chunks, settings, h.templates, h.prompts, h.initialMemory, h.engine]);
}
