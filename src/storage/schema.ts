import type { Anchor } from '../core/anchors';
import type { Citation, Unsourced } from '../core/citations/citation';
import type { BookSpan } from '../core/book-set';
import type { InfmemMethod, ReadPlan } from '../core/plan';
import type { PlannedChunk } from '../core/read-reason';
import type { FinishReason, WritingStats } from '../core/generation';
import type { PromptRecord } from '../core/prompt-sets';
import type { PromptTemplates } from '../core/prompts';

/** A book as stored: metadata here, its text in a store of its own so listings stay light. */
export interface DocumentRecord {
  /**
   * SHA-256 of the file's bytes (the same file twice is one document), or, for
   * a text read as a stream (its hash is known only once it is read), an id of
   * its own, with the hash in `sha256`.
   */
  id: string;
  /** SHA-256 of the file's bytes, where `id` is not that hash. */
  sha256?: string;
  name: string;
  bytes: number;
  encoding: string;
  chars: number;
  tokens: number;
  /**
   * True while `tokens` is an estimate from samples of the text: a long book is
   * counted after it is stored, so that reading can start at once.
   */
  tokensEstimated?: boolean;
  addedAt: number;
  /** text, markdown, html, epub, pdf or docx; absent on documents stored before formats were told apart. */
  format?: string;
  /**
   * Chapters, headings and pages, sorted by offset into the text: where a chunk
   * is in the book. Kept with part 0 of the text (see getAnchors), not here,
   * by documents stored since: a long book has hundreds of thousands, and
   * every listing of the books would read them. Older records have them here.
   */
  anchors?: Anchor[];
  pages?: number;
  title?: string;
  /** Characters cut away as Project Gutenberg's header and footer; their text is kept beside the document's. */
  stripped?: { header: number; footer: number };
  /** Characters per stored part of the text (see core/text-parts): the text is read through them. */
  partChars: number;
  /**
   * Present while the text's later parts are still being written. A document is
   * usable once its first part is stored; one left like this by an import that
   * was cut short (a closed tab, a crash) is removed when the app opens again.
   */
  importing?: true;
}

/** A SHA-256 in hex: a file's identity. */
export const SHA256_HEX = /^[0-9a-f]{64}$/;

/** The SHA-256 of a document's file: its id, or (a text read as a stream) the hash kept beside; undefined until known. */
export function contentHash(doc: Pick<DocumentRecord, 'id' | 'sha256'>): string | undefined {
  return doc.sha256 ?? (SHA256_HEX.test(doc.id) ? doc.id : undefined);
}

/** One part of a document's text: characters [part × partChars, (part + 1) × partChars). */
export interface TextPartRecord {
  documentId: string;
  part: number;
  text: string;
  /** On part 0 only: what was cut from the text on import. */
  stripped?: StrippedText;
  /** On part 0 only: the document's anchors (see DocumentRecord.anchors). */
  anchors?: Anchor[];
}

/** What was cut from a document's text on import, kept so that nothing is lost. */
export interface StrippedText {
  header: string;
  footer: string;
}

/** A run's settings as planned (src/core/plan.ts): stored with the run, so that a resume reads on exactly as it began. */
export type RunSettings = ReadPlan;

export interface SkimPlan {
  /** Share of the book's chunks chosen by rank, before neighbours. */
  keep: number;
  neighbours: number;
  /** Whether entities newly written into memory add chunks as the run goes. */
  followMemory: boolean;
  /** Whether earlier chunks that names point to are read after the last planned one (absent: no). */
  lookBack?: boolean;
  /** Chunks in the whole book. */
  totalChunks: number;
}

/** Where a job (a run or an evaluation sweep) stands; every kind of job has the same life. */
export type JobStatus = 'running' | 'paused' | 'cancelled' | 'done' | 'failed';
export type RunStatus = JobStatus;

/** One book of a run over a set (see core/book-set): which document, and where its text lies in the set's. */
export interface RunBook extends BookSpan {
  documentId: string;
  name: string;
  /** The title its header line gives it, and places name it by. */
  title: string;
  /** SHA-256 of the book's file: how an imported run finds it. */
  sha256?: string;
}

export interface RunRecord {
  id: string;
  /** The book read; for a run over a set, its first book. */
  documentId: string;
  /** The book's name; for a set, the names joined. */
  documentName: string;
  /** Present when the run reads several books as one stream, in reading order; absent for one book. */
  books?: RunBook[];
  question: string;
  /** Present when one read asked several questions: the runs of that read share it (one run per question). */
  readId?: string;
  engineId: string;
  /** The engine's own choices (model, server); see EngineConfig. */
  engineConfig?: Readonly<Record<string, string | number | boolean>>;
  settings: RunSettings;
  templates: PromptTemplates;
  /** Which prompt set the templates are (and the file and hash of MemAgent's); absent on runs from before prompt sets. */
  prompts?: PromptRecord;
  /**
   * The chunks this run reads, in document order: all of them, or a skim's
   * choice, each with why it is read; a skim that looks back reads a tail of
   * earlier chunks after them, latest first.
   */
  chunks: PlannedChunk[];
  /** Present while the book is still being cut: `chunks` holds those cut so far. */
  chunking?: { estimate: number };
  /** Present when the run skims: how the chunks were chosen from the whole book. */
  skim?: SkimPlan;
  /** Present on an InfMem read (absent: MemAgent's, as every run stored before InfMem was). */
  method?: InfmemMethod;
  /** An InfMem read's planner state after chunk nextChunk − 1, and where the read stopped (see InfmemProgress). */
  infmem?: InfmemProgress;
  /** An InfMem read with a model: how its requests were rendered and sent, and where its prompt files came from (absent for the extractive engine). */
  infmemModel?: InfmemModelRecord;
  status: RunStatus;
  /** Index of the next chunk to read; equals chunks.length once every chunk is read. */
  nextChunk: number;
  /** Memory after chunk nextChunk − 1: with nextChunk, all a resume needs. */
  memory: string;
  answer?: string;
  reply?: string;
  error?: string;
  createdAt: number;
  updatedAt: number;
  finishedAt?: number;
}

/** What an InfMem read with a model records of its requests. */
export interface InfmemModelRecord {
  /** The chat text the app rendered each prompt in (Qwen3's, or Qwen2.5's with the model's default system message). */
  family: 'qwen3' | 'qwen2.5';
  /** Where each of the two pinned files came from: the URL it was fetched from, or "imported <name>". */
  files: { infmem: string; fncall: string };
  /** Set once a server without raw completions was sent the requests at its chat endpoint instead. */
  endpoint?: 'chat';
  /**
   * Set once a request had a chat-template control string of the book, the
   * question or the memory made inert (the official code sends them as they
   * are; a dataset evaluation by InfMem's method does too, and never sets it).
   */
  inert?: true;
}

/** One search of an InfMem planner, as its history keeps it. */
export interface StoredRetrieval {
  query: string;
  /** `str(top_k)` as the planner asked for it (recorded, not used: four passages are retrieved). */
  topK: string;
  /** Why the call's arguments were not used (the question was), where they were not. */
  fallback?: string;
}

/** What an InfMem read carries from chunk to chunk besides its memory: with nextChunk and memory, all a resume needs. */
export interface InfmemProgress {
  /** Votes to stop in a row after the last plan. */
  votes: number;
  /** Every search so far, oldest first. */
  history: StoredRetrieval[];
  /** Where the read ended early: before chunk `index` (from 0), with the votes that ended it. */
  stopped?: { index: number; votes: number };
  /**
   * The chunks (from 0, in order) whose four passages were cut inside a tie
   * of equal BM25 scores: the official code, whose ties fall as the hardware
   * orders them, may have retrieved others. Absent where none was.
   */
  ties?: number[];
}

/** A passage InfMem retrieved for a chunk: a 500-token unit of the book, by its characters in the run's text. */
export interface RetrievedPassage {
  /** The chunk the passage lies in (from 0): read already, or not. */
  chunk: number;
  start: number;
  end: number;
  /** Its first words, to show without reading the book. */
  excerpt: string;
}

/** An InfMem planner's decision before a chunk: its searches, or a vote to stop, and what was retrieved. */
export interface StepPlan {
  /** The planner voted to stop (the read went on: too few votes in a row yet). */
  stop: boolean;
  /** The queries it searched for, in order; empty for a stop vote or a reply with no search. */
  queries: string[];
  /** Votes to stop in a row after this plan. */
  votes: number;
  /** The passages the writer was given with the chunk, in rank order. */
  retrieved: RetrievedPassage[];
}

/** A run without its chunk list: what committing a revision reads and writes. */
export type RunProgress = Omit<RunRecord, 'chunks'>;

/**
 * One memory update, without its text: what a timeline of thousands of
 * revisions reads. The memory itself is in MemoryRecord, read when shown.
 */
export interface RevisionRecord {
  runId: string;
  /** Chunk index, from 0; shown as "Revision index + 1". */
  index: number;
  memoryTokens: number;
  /** Words the update added to and removed from the previous memory. */
  wordsAdded: number;
  wordsRemoved: number;
  start: number;
  end: number;
  chunkTokens: number;
  promptTokens: number;
  completionTokens: number;
  ms: number;
  finishReason: FinishReason;
  /** Attempts that failed before this one succeeded. */
  retries: number;
  committedAt: number;
  /** Speeds an engine reports (WebLLM); absent for engines that don't. */
  prefillTokensPerSecond?: number;
  decodeTokensPerSecond?: number;
  timeToFirstTokenSeconds?: number;
  /** Passes and drafted tokens, where the engine wrote speculatively; absent otherwise. */
  writing?: WritingStats;
  /** An InfMem read's plan before this chunk; absent on MemAgent's. */
  plan?: StepPlan;
}

export interface MemoryRecord {
  runId: string;
  index: number;
  memory: string;
}

/**
 * A question asked of a finished run's final memory: one answer step, no
 * reading. That memory was kept for the run's own question, which the answer
 * is shown with.
 */
export interface FollowUpRecord {
  runId: string;
  /** Order of asking, from 0. */
  index: number;
  question: string;
  answer: string;
  /** The engine's whole reply, of which `answer` is the extracted part. */
  reply: string;
  /** The revision whose memory answered (the run's last); -1 for a run that read no chunk. */
  memoryIndex: number;
  promptTokens: number;
  completionTokens: number;
  finishReason: FinishReason;
  ms: number;
  askedAt: number;
}

/** A sentence an answer cites (see core/citations), with where it is in words. */
export interface StoredCitation extends Citation {
  /** The book (in a set), chapter and page of the sentence, or of its section without it; '' where nothing is known. */
  place: string;
}

/** Which answer of a run a SourcesRecord is for: the run's own, or follow-up answer n (0, 1, …). */
export const RUN_ANSWER = -1;

/**
 * Where an answer's facts came from: traced through the run's memory back to
 * the sentences of the book (core/citations), once the answer is stored.
 */
export interface SourcesRecord {
  runId: string;
  /** RUN_ANSWER for the run's own answer, else the follow-up answer's index. */
  answer: number;
  /** The revision whose memory the answer was written from (the run's last). */
  memoryIndex: number;
  citations: StoredCitation[];
  /** What no section of the book supports: a finding shown as such, not an error. */
  unsourced: Unsourced[];
  /** Whether the book's sections were read; without them (a book not stored here) citations name revisions only. */
  sections: boolean;
  tracedAt: number;
}

/**
 * A named set of books kept in the Library (a collection), to ask questions of
 * together again later. Deleting it leaves its books; deleting one of its
 * books takes it out of the collection.
 */
export interface CollectionRecord {
  id: string;
  name: string;
  /** The books, in reading order. */
  documentIds: string[];
  createdAt: number;
  updatedAt: number;
}

/** A MemAgent prompt file as kept for offline use: its bytes, checked against the pinned hash before each use. */
export interface PromptFileRecord {
  /** Path in the MemAgent repository (the key). */
  path: string;
  sha256: string;
  bytes: ArrayBuffer;
  /** Where it came from: the URL it was fetched from, or "imported <file name>". */
  source: string;
  savedAt: number;
}
