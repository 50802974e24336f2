/**
 * The journal of a read by InfMem's method: a header, then one line per chunk
 * written (its plan, the units retrieved, the memory, and the planner's state
 * after it: the votes to stop in a row and every search so far), then the
 * answer. Each line is on disk before the next chunk is planned, so that
 * `--resume` goes on with the memory and the planner's state as they were,
 * and sends what a read that never stopped would have sent.
 */
import type { ChatTextOptions } from '../core/infmem/chat-text';
import type { InfmemResume, PlanEvent, WriteEvent } from '../core/infmem/loop';
import type { Retrieval } from '../core/infmem/planner-reply';
import { UsageError } from './flags';
import { INFMEM_JOURNAL_FORMAT, JOURNAL_FORMAT, type JournalHeader, journalLines } from './journal';
import { refuseOtherModel } from './read-start';
import type { ReadSources } from './sources';

export const INFMEM_JOURNAL_VERSION = 1;

/** The chat text a model's requests are rendered in: its family, and Qwen2.5's default system message. */
export type InfmemChat = Pick<ChatTextOptions, 'family' | 'defaultSystem'>;

/** The settings a read keeps from its first run to its last: a resume takes them from the header. */
export interface InfmemReadSettings {
  earlyStop: number;
  thinking: boolean;
  temperature: number;
  topP: number;
}

export interface InfmemJournalHeader {
  type: typeof INFMEM_JOURNAL_FORMAT;
  version: number;
  document: JournalHeader['document'];
  question: string;
  engine: JournalHeader['engine'];
  settings: InfmemReadSettings;
  /** The chat text a model's requests are rendered in; none with the extractive engine, which renders none. */
  chat?: InfmemChat;
  /** The SHA-256 of the pinned files the prompts were read from; none with the extractive engine. */
  files?: { infmem: string; fncall: string };
  /** How many chunks of 5,000 tokens and units of 500 the text was cut into: a resume must cut it the same. */
  chunks: number;
  units: number;
  createdAt: string;
}

export interface InfmemJournalRevision {
  type: 'revision';
  /** The chunk written, from 0. */
  index: number;
  /** Its number from 1, as the terminal says it. */
  revision: number;
  /** The planner's reply before it: a vote to stop (below the early stop), or the searches asked. */
  plan: { stop: boolean; queries: string[] };
  /** The units retrieved for it, in rank order. */
  units: number[];
  memory: string;
  /** The planner's state after this chunk: votes to stop in a row, and every search so far. */
  votes: number;
  history: Retrieval[];
  ms: number;
  committedAt: string;
}

export interface InfmemJournalAnswer {
  type: 'answer';
  /** The answer after "the answer is"; '' when the reply gives none. */
  answer: string;
  final: string;
  /** Chunks the read got to, the one it stopped before included (the official `step`). */
  step: number;
  /** Where votes ended the read early: before which chunk (from 0), with how many votes. */
  stopped?: { index: number; votes: number };
  ms: number;
  committedAt: string;
  /** The answer's sources, revisions numbered from 1 (absent in journals written before they were traced). */
  sources?: ReadSources;
}

export interface InfmemJournal {
  header: InfmemJournalHeader;
  revisions: InfmemJournalRevision[];
  answer?: InfmemJournalAnswer;
  /** Bytes of complete lines: a line cut off by a crash is dropped on resume. */
  validBytes: number;
}

export function readInfmemJournal(path: string): InfmemJournal {
  const { lines, validBytes } = journalLines(path);
  const header = lines[0] as InfmemJournalHeader | undefined;
  if (lines[0]?.type === JOURNAL_FORMAT) throw new UsageError(`${path} holds a read by MemAgent's method: resume it without --method infmem.`);
  if (!header || header.type !== INFMEM_JOURNAL_FORMAT || header.version !== INFMEM_JOURNAL_VERSION) {
    throw new UsageError(`${path} is not a journal of a read by InfMem's method. Choose another --out, or --force to replace it.`);
  }
  const revisions: InfmemJournalRevision[] = [];
  let answer: InfmemJournalAnswer | undefined;
  for (const [i, line] of lines.slice(1).entries()) {
    if (line.type === 'revision') {
      const r = line as InfmemJournalRevision;
      if (r.index !== revisions.length || answer)
        throw new UsageError(`${path} line ${i + 2} holds chunk ${r.index + 1} out of order: the journal is damaged. Start over with --force.`);
      revisions.push(r);
    } else if (line.type === 'answer') answer = line as InfmemJournalAnswer;
  }
  return { header, revisions, answer, validBytes };
}

/** Where a journal's read goes on from: the chunk after its last, with that chunk's memory and the planner's state. */
export function resumeOf(journal: InfmemJournal | null): InfmemResume | undefined {
  const last = journal?.revisions.at(-1);
  if (!last) return undefined;
  return { nextChunk: last.index + 1, memory: last.memory, votes: last.votes, history: last.history };
}

/** What the command line gives of the settings: undefined where a flag is absent. */
export type GivenSettings = { [K in keyof InfmemReadSettings]?: InfmemReadSettings[K] };

const SETTING_FLAG: Readonly<Record<keyof InfmemReadSettings, string>> = {
  earlyStop: 'early-stop',
  thinking: 'thinking',
  temperature: 'temperature',
  topP: 'top-p',
};

/**
 * The settings of a read: a resume keeps its journal's, and refuses a flag
 * that would change one (the requests would no longer be the first run's);
 * a new read takes the flags, else the defaults.
 */
export function settingsFor(given: GivenSettings, defaults: InfmemReadSettings, kept?: { path: string; settings: InfmemReadSettings }): InfmemReadSettings {
  if (!kept) return { ...defaults, ...Object.fromEntries(Object.entries(given).filter(([, v]) => v !== undefined)) };
  for (const key of Object.keys(SETTING_FLAG) as (keyof InfmemReadSettings)[]) {
    const value = given[key];
    if (value !== undefined && value !== kept.settings[key]) {
      const was = typeof kept.settings[key] === 'boolean' ? (kept.settings[key] ? 'on' : 'off') : String(kept.settings[key]);
      throw new UsageError(
        `${kept.path} was read with --${SETTING_FLAG[key]} ${was}; a resume keeps it. Drop --${SETTING_FLAG[key]}, or start over with --force.`,
      );
    }
  }
  return kept.settings;
}

/** What a journal is checked against before a resume: the text as it is cut now, and the question given, if one is. */
export interface ResumeCheck {
  path: string;
  file: string;
  document: { hash: string; chunks: number; units: number };
  question: string | undefined;
}

/** Refuses a journal that this command line would continue wrongly: another book, another question, another cut of the text. */
export function checkInfmemResume(journal: InfmemJournal, { path, file, document, question }: ResumeCheck): void {
  const h = journal.header;
  if (h.document.hash !== document.hash) throw new UsageError(`${path} was written for another file ("${h.document.name}"), not ${file}.`);
  if (question !== undefined && question !== h.question)
    throw new UsageError(`${path} reads for another question ("${h.question}"). Drop --question to continue it, or choose another --out.`);
  if (h.chunks !== document.chunks || h.units !== document.units)
    throw new UsageError(`${path} does not cover this text as it is cut now (${h.chunks} chunks, ${document.chunks} now). Start over with --force.`);
}

/** What a resume must continue with as its first run read: the same engine and model, chat text and pinned files. */
export function checkSameModel(
  journal: InfmemJournal,
  now: Pick<InfmemJournalHeader, 'chat' | 'files'> & { identity: InfmemJournalHeader['engine'] },
  { path, force }: { path: string; force: boolean },
): void {
  const h = journal.header;
  refuseOtherModel(h.engine, now.identity, { out: path, force });
  if (h.chat && now.chat && h.chat.family !== now.chat.family)
    throw new UsageError(
      `${path} was read in ${familyName(h.chat.family)}'s chat text, not ${familyName(now.chat.family)}'s; a resume keeps it. Drop --chat, or start over with --force.`,
    );
  if (h.files && now.files && (h.files.infmem !== now.files.infmem || h.files.fncall !== now.files.fncall))
    throw new UsageError(`${path} was read with other copies of InfMem's pinned files than these: start over with --force.`);
}

export function familyName(family: InfmemChat['family']): string {
  return family === 'qwen3' ? 'Qwen3' : 'Qwen2.5';
}

/** The journal line of one chunk written, with the plan before it. */
export function revisionLine(event: WriteEvent, plan: PlanEvent | null, ms: number): InfmemJournalRevision {
  return {
    type: 'revision',
    index: event.index,
    revision: event.index + 1,
    plan: { stop: plan?.stop ?? false, queries: plan?.retrievals.map((r) => r.query) ?? [] },
    units: event.units,
    memory: event.memory,
    votes: event.votes,
    history: event.history,
    ms,
    committedAt: new Date().toISOString(),
  };
}
