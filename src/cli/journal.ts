/**
 * The read journal: one JSON line per step, each on disk before the next step
 * starts, so that `memagent read --resume` continues where a read stopped.
 */
import { closeSync, fsyncSync, mkdirSync, openSync, readFileSync, truncateSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import type { ChunkSpan } from '../core/chunker';
import { type TextGenerator, withOwnTuner } from '../core/generation';
import { type AnswerEvent, appLoopMethod, type LoopInput, type RevisionEvent } from '../core/loop';
import type { ReadPlan } from '../core/plan';
import type { PromptRecord } from '../core/prompt-sets';
import type { PromptTemplates } from '../core/prompts';
import { UsageError } from './flags';
import { type ReadSources, renumberSources } from './sources';

export const JOURNAL_FORMAT = 'memagent-read';
/**
 * 2: revisions are numbered from 1 wherever the journal names one (each
 * revision line's `revision`, the answer's sources), as the terminal prints
 * them. Version 1 numbered the sources' revisions from 0; it is still read, and
 * a resumed one is finished in its own numbering.
 */
export const JOURNAL_VERSION = 2;
const READABLE_VERSIONS = [1, JOURNAL_VERSION];

export interface JournalHeader {
  type: typeof JOURNAL_FORMAT;
  version: number;
  /** The file read; for several read as one set, the set, with where each book lies (`hash` then covers them all). */
  document: { name: string; hash: string; chars: number; books?: { name: string; hash: string; title: string; start: number; body: number; end: number }[] };
  question: string;
  engine: { id: string; model?: string; baseUrl?: string };
  settings: ReadPlan;
  templates: PromptTemplates;
  /** Which prompt set the templates are, and for MemAgent's the file and hash they were read from. */
  prompts?: PromptRecord;
  /** The set's memory before the first chunk (this app's when absent). */
  initialMemory?: string;
  /** [start, end, tokens] of every chunk: a resume reads exactly these, whatever the server now allows. */
  chunks: [number, number, number][];
  createdAt: string;
}

export interface JournalRevision {
  type: 'revision';
  /** The chunk read, from 0: its place in the header's `chunks`. */
  index: number;
  /** The revision's number, from 1 (index + 1), as the terminal and the sources name it; absent on lines written before version 2. */
  revision?: number;
  start: number;
  end: number;
  chunkTokens: number;
  memory: string;
  memoryTokens: number;
  promptTokens: number;
  completionTokens: number;
  ms: number;
  finishReason: string;
  retries: number;
  committedAt: string;
}

export interface JournalAnswer {
  type: 'answer';
  answer: string;
  reply: string;
  /** Where the answer's facts came from (absent on journals written before sources were traced); see JOURNAL_VERSION for their numbering. */
  sources?: ReadSources;
  promptTokens: number;
  completionTokens: number;
  ms: number;
  retries: number;
  committedAt: string;
}

export interface Journal {
  header: JournalHeader;
  revisions: JournalRevision[];
  answer?: JournalAnswer;
  /** Bytes of complete lines: a line cut off by a crash is dropped on resume. */
  validBytes: number;
}

/** The header type of a journal of a read by InfMem's method (infmem-journal.ts), told apart from MemAgent's. */
export const INFMEM_JOURNAL_FORMAT = 'memagent-infmem-read';

/**
 * A journal's lines, parsed: a last line without its newline was being
 * written when the read stopped, and does not count. `validBytes` is where
 * the complete lines end, for the writer to continue from.
 */
export function journalLines(path: string): { lines: { type?: string }[]; validBytes: number } {
  const bytes = readFileSync(path);
  const validBytes = bytes.lastIndexOf(0x0a) + 1;
  const text = bytes.subarray(0, validBytes).toString('utf8').split('\n').slice(0, -1);
  const lines = text.map((line, i) => {
    try {
      return JSON.parse(line) as { type?: string };
    } catch {
      throw new UsageError(`${path} line ${i + 1} is not JSON: the journal is damaged. Start over with --force.`);
    }
  });
  return { lines, validBytes };
}

/**
 * Reads a journal; a last line without its newline was being written when the
 * read stopped, and does not count. The answer's sources come back numbered
 * from 1, whatever the journal's version.
 */
export function readJournal(path: string): Journal {
  const { lines: parsed, validBytes: end } = journalLines(path);
  const header = parsed[0] as JournalHeader | undefined;
  if (parsed[0]?.type === INFMEM_JOURNAL_FORMAT) throw new UsageError(`${path} holds a read by InfMem's method: resume it with --method infmem.`);
  if (!header || header.type !== JOURNAL_FORMAT || !READABLE_VERSIONS.includes(header.version)) {
    throw new UsageError(`${path} is not a memagent read journal. Choose another --out, or --force to replace it.`);
  }
  const revisions: JournalRevision[] = [];
  let answer: JournalAnswer | undefined;
  for (const [i, line] of parsed.slice(1).entries()) {
    if (line.type === 'revision') {
      const r = line as JournalRevision;
      if (r.index !== revisions.length || answer)
        throw new UsageError(`${path} line ${i + 2} holds revision ${r.index + 1} out of order: the journal is damaged.`);
      revisions.push(r);
    } else if (line.type === 'answer') {
      answer = line as JournalAnswer;
      if (answer.sources) answer.sources = fromJournal(header, answer.sources);
    }
  }
  return { header, revisions, answer, validBytes: end };
}

/** Sources as a journal with this header numbers them, from sources numbered from 1. */
export function toJournal(header: Pick<JournalHeader, 'version'>, sources: ReadSources): ReadSources {
  return header.version === 1 ? renumberSources(sources, -1) : sources;
}

function fromJournal(header: Pick<JournalHeader, 'version'>, sources: ReadSources): ReadSources {
  return header.version === 1 ? renumberSources(sources, 1) : sources;
}

/** The journal line of one revision: the chunk read, the memory it wrote and what that cost. */
export function revisionLine(event: RevisionEvent, span: ChunkSpan, memoryTokens: number): JournalRevision {
  const { usage } = event.result;
  return {
    type: 'revision',
    index: event.index,
    revision: event.index + 1,
    start: span.start,
    end: span.end,
    chunkTokens: span.tokens,
    memory: event.memory,
    memoryTokens,
    promptTokens: usage.promptTokens,
    completionTokens: usage.completionTokens,
    ms: event.ms,
    finishReason: event.result.finishReason,
    retries: event.result.retries ?? 0,
    committedAt: new Date().toISOString(),
  };
}

/** The journal's last line: the answer and its sources, numbered as the journal with `header` numbers them. */
export function answerLine(event: AnswerEvent, header: Pick<JournalHeader, 'version'>, sources: ReadSources): JournalAnswer {
  const { usage } = event.result;
  return {
    type: 'answer',
    answer: event.answer,
    reply: event.reply,
    sources: toJournal(header, sources),
    promptTokens: usage.promptTokens,
    completionTokens: usage.completionTokens,
    ms: event.ms,
    retries: event.result.retries ?? 0,
    committedAt: new Date().toISOString(),
  };
}

/** Opens a file the command writes, making its folder first: `--out runs/today/book.jsonl` should not fail on a missing folder. */
export function openOutput(path: string, flags: 'w' | 'a'): number {
  mkdirSync(dirname(path), { recursive: true });
  return openSync(path, flags);
}

/** Appends lines, each on disk before the next step starts, so that a crash loses at most the step in flight. */
export class JournalWriter {
  private readonly fd: number;

  constructor(path: string, fresh: boolean, validBytes = 0) {
    if (!fresh) truncateSync(path, validBytes);
    this.fd = openOutput(path, fresh ? 'w' : 'a');
  }

  append(line: object): void {
    writeSync(this.fd, `${JSON.stringify(line)}\n`);
    fsyncSync(this.fd);
  }

  close(): void {
    closeSync(this.fd);
  }
}

/**
 * The memory loop of a journal's read, from its header and the revisions it
 * holds: a read of one question and each question of a read of several run it
 * the same way, the latter generating through its member of the step batch.
 */
export function journalLoop(
  header: JournalHeader,
  journal: Journal | null | undefined,
  read: Pick<LoopInput, 'text' | 'chunks' | 'signal'> & { generator: TextGenerator; nextChunk: number },
): LoopInput {
  return {
    text: read.text,
    chunks: read.chunks,
    question: header.question,
    generator: withOwnTuner(read.generator),
    templates: header.templates,
    memoryTokens: header.settings.memoryTokens,
    sampling: { temperature: header.settings.temperature, topP: header.settings.topP, seed: header.settings.seed },
    ...(header.initialMemory !== undefined && { initialMemory: header.initialMemory }),
    method: appLoopMethod(header.prompts?.answerStyle),
    resume: journal?.revisions.length ? { nextChunk: read.nextChunk, memory: journal.revisions.at(-1)!.memory } : undefined,
    ...(read.signal && { signal: read.signal }),
  };
}
