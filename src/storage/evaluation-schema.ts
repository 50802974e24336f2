import type { PromptRecord } from '../core/prompt-sets';
import type { ChunkCutter } from '../core/token-slices';
import type { DatasetItem } from '../eval/dataset';
import type { InfmemModelRecord, JobStatus } from './schema';
import type { PromptsUsed } from '../eval/dataset-report';
import type { ItemResult, MethodId, MethodSettings } from '../eval/method';
import type { SampleResult, SweepSpec } from '../eval/sweep';
import type { EvalMethod } from '../eval/infmem-read';

export type EvaluationStatus = JobStatus;

/** Where the "essay" haystack comes from: the built-in generated essay or a stored document. */
export type EvaluationHaystack = { kind: 'generated' } | { kind: 'document'; documentId: string; name: string };

/** An evaluation of dataset files by the paper's method, in place of generated tasks. */
export interface DatasetEvaluation {
  method: MethodId;
  /** How the contexts are cut: the method's exact token slices. */
  cutter: ChunkCutter;
  /** The files in the order given, each with its document count and the items taken from it. */
  files: { name: string; numDocs: number | null; items: number }[];
  settings: MethodSettings;
  /** What the report records: the set and, for MemAgent's, the file's SHA-256. */
  prompts: PromptsUsed;
  /** The set as a read records it: its name, file, commit, where it came from, and why it differs from the one asked for. */
  promptRecord?: PromptRecord;
}

/** A sweep as stored: its settings and progress; each finished sample is a record of its own. */
export interface EvaluationRecord {
  id: string;
  engineId: string;
  /** Engine-specific choices (a model, a server address), so that a resume makes the same engine; never secrets. */
  engineConfig?: Readonly<Record<string, string | number | boolean>>;
  haystack: EvaluationHaystack;
  spec: SweepSpec;
  /** Present when the evaluation reads dataset files (stored as datasetItems, by ordinal) instead of generating tasks. */
  dataset?: DatasetEvaluation;
  /** InfMem read with a model: its chat text, where its prompt files came from, and the endpoint where a server had no raw completions. */
  infmemModel?: InfmemModelRecord;
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

/** One dataset item read by the method, stored beside the generated tasks' samples. */
export interface DatasetSampleRecord extends ItemResult {
  kind: 'dataset';
  /** The method that read it (MemAgent's where absent: items stored before InfMem read datasets). */
  method?: EvalMethod;
  evaluationId: string;
  /** Position among all the evaluation's items, files in order, each method's after the one before. */
  ordinal: number;
  committedAt: number;
}

/** One item of a dataset file, kept until its evaluation is deleted so that a reload resumes it. */
export interface DatasetItemRecord extends DatasetItem {
  evaluationId: string;
  ordinal: number;
  file: string;
}
