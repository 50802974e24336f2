import type { SampleResult, SweepSpec } from '../eval/sweep';

export type EvaluationStatus = 'running' | 'paused' | 'cancelled' | 'done' | 'failed';

/** Where the "essay" haystack comes from: the built-in generated essay or a stored document. */
export type EvaluationHaystack = { kind: 'generated' } | { kind: 'document'; documentId: string; name: string };

/** A sweep as stored: its settings and progress; each finished sample is a record of its own. */
export interface EvaluationRecord {
  id: string;
  engineId: string;
  /** Engine-specific choices (a model, a server address), so that a resume makes the same engine; never secrets. */
  engineConfig?: Readonly<Record<string, string | number | boolean>>;
  haystack: EvaluationHaystack;
  spec: SweepSpec;
  /** Samples in the sweep. */
  total: number;
  /** Samples stored so far; a resumed sweep goes on with the next unfinished one. */
  completed: number;
  status: EvaluationStatus;
  error?: string;
  createdAt: number;
  updatedAt: number;
  finishedAt?: number;
}

export interface EvaluationSampleRecord extends SampleResult {
  evaluationId: string;
  committedAt: number;
}

/** What every tab hears about a sweep; results are read from storage. */
export type EvaluationEvent =
  | { type: 'sample'; evaluationId: string; ordinal: number }
  /** Progress inside a long sample; not stored. */
  | { type: 'step'; evaluationId: string; ordinal: number; chunk: number; chunks: number }
  | { type: 'status'; evaluationId: string; status: EvaluationStatus; error?: string }
  | { type: 'control'; evaluationId: string; action: 'pause' | 'cancel' };

export const EVALUATION_EVENTS_CHANNEL = 'memagent-evaluation-events';
