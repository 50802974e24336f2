import type { RunStatus } from '../storage/schema';
import type { EvaluationStatus } from '../storage/evaluation-schema';

/*
 * What the worker tells every tab, and what one tab tells the workers of the
 * others. Kept apart from the API type (protocol.ts re-exports it all) so that
 * the runner and the sweeps, which publish these, import nothing that names them.
 */

/** What every tab hears about a run; texts are read from storage when shown. */
export type RunEvent =
  | { type: 'revision'; runId: string; index: number }
  /** More of the book was cut into chunks; `done` once the count is exact. */
  | { type: 'chunks'; runId: string; known: number; done: boolean }
  /** The memory being written for chunk `index` (index = chunk count: the answer), so far. */
  | { type: 'writing'; runId: string; index: number; text: string }
  | { type: 'status'; runId: string; status: RunStatus; error?: string }
  | { type: 'control'; runId: string; action: 'pause' | 'cancel' }
  /** Follow-up answer `index` of a finished run is stored. */
  | { type: 'followUp'; runId: string; index: number }
  /** The sources of an answer are stored: the run's own (answer -1) or follow-up answer `answer`. */
  | { type: 'sources'; runId: string; answer: number }
  /** A document's record changed (its token count became exact). */
  | { type: 'document'; documentId: string }
  /** A collection of books was kept, changed or deleted. */
  | { type: 'collection'; collectionId: string };

export const EVENTS_CHANNEL = 'memagent-events';

/** What every tab hears about a sweep; results are read from storage. */
export type EvaluationEvent =
  | { type: 'sample'; evaluationId: string; ordinal: number }
  /** Progress inside a long sample; not stored. */
  | { type: 'step'; evaluationId: string; ordinal: number; chunk: number; chunks: number }
  | { type: 'status'; evaluationId: string; status: EvaluationStatus; error?: string }
  | { type: 'control'; evaluationId: string; action: 'pause' | 'cancel' };

export const EVALUATION_EVENTS_CHANNEL = 'memagent-evaluation-events';

/**
 * A gate for tests that must act while a run has a step in hand, however fast
 * this machine reads. A page posts `hold` and every run in every tab waits
 * before it generates chunk `index` or a later one (the answer is the chunk
 * count), saying `held`; `release` lets the runs waiting now go on, and a new
 * `hold` before it moves the gate on. Each worker answers `hold` with
 * `holding` once the gate is in place. Nothing posts here in the app itself.
 */
export type HoldMessage =
  { type: 'hold'; index: number } | { type: 'holding'; index: number } | { type: 'held'; runId: string; index: number } | { type: 'release' };

export const HOLD_CHANNEL = 'memagent-hold';
