import type { PromptSet, FileSetId, PromptSetId } from '../core/prompt-sets';
import type { EngineConfig, EngineInfo } from '../engines/engine';
import type { ServerCheck } from '../engines/openai/engine';
import type { GpuCapability } from '../engines/webllm/webgpu';
import type { CustomModelSpec, ModelProgress } from '../engines/webllm/models';
import type { StoredModel } from '../engines/wllama/files';
import type { ModelList } from '../engines/webllm/manager';
import type { EvaluationRequest } from '../runs/evaluator';
import type { PromptFileStatus } from '../runs/prompt-files';
import type { IngestRequest } from '../library/library';
import type { RunRequest } from '../runs/plan';
import type { MemorySources } from '../runs/sources';
import type { SpeedRecord } from '../storage/model-schema';
import type { DocumentRecord, FollowUpRecord } from '../storage/schema';

export type { EvaluationRequest, IngestRequest, MemorySources, PromptFileStatus, RunRequest };

/*
 * What the page and the agent worker say to each other: the calls the worker
 * answers (over comlink), what each returns, and the events every tab hears
 * (over BroadcastChannel). The worker writes; the page asks, listens and reads.
 */

export * from './events';

/** Errors cross to the page as plain data, so their message and kind survive. */
export interface Outcome<T> {
  ok: boolean;
  value?: T;
  error?: { name: string; message: string };
}

/** Callbacks arrive as Comlink.proxy from the page; what they return is ignored. */
type Listener<A extends unknown[]> = (...args: A) => unknown;

/** The worker's API. Every call but the watchers answers an Outcome; the worker resumes interrupted jobs itself at start. */
export interface AgentApi {
  engines(): Promise<readonly EngineInfo[]>;
  /**
   * `onProgress` follows the import bar; `onUsable` hears of the document as
   * soon as it can be read, while the rest of its text is stored.
   */
  ingest(
    file: File,
    engineId: string,
    options?: { stripGutenberg?: boolean },
    onProgress?: IngestRequest['onProgress'],
    onUsable?: IngestRequest['onUsable'],
  ): Promise<Outcome<DocumentRecord>>;
  deleteDocument(id: string): Promise<Outcome<{ runs: number }>>;
  startRun(request: RunRequest): Promise<Outcome<string>>;
  /** One run per question over the same book, sharing its chunk list; returns their ids in the questions' order. */
  startRuns(request: Omit<RunRequest, 'question'>, questions: string[]): Promise<Outcome<string[]>>;
  resumeRun(runId: string): Promise<Outcome<void>>;
  pauseRun(runId: string): Promise<Outcome<void>>;
  cancelRun(runId: string): Promise<Outcome<void>>;
  deleteRun(runId: string): Promise<Outcome<void>>;
  /** Answers a new question from a finished run's final memory and stores it; `onWriting` sees the reply so far. */
  askFollowUp(runId: string, question: string, onWriting?: Listener<[text: string]>): Promise<Outcome<FollowUpRecord>>;
  /** Traces and stores the sources of a finished run's answers that have none yet (runs from before sources were kept). */
  findSources(runId: string): Promise<Outcome<void>>;
  /** Where each sentence of revision `revision`'s memory came from, traced now; nothing is stored. */
  traceMemory(runId: string, revision: number): Promise<Outcome<MemorySources>>;
  /** `onRead` hears the bytes of dataset files read so far, and of how many. */
  startEvaluation(request: EvaluationRequest, onRead?: Listener<[bytes: number, total: number]>): Promise<Outcome<string>>;
  resumeEvaluation(id: string): Promise<Outcome<void>>;
  pauseEvaluation(id: string): Promise<Outcome<void>>;
  cancelEvaluation(id: string): Promise<Outcome<void>>;
  importRun(json: string): Promise<Outcome<string>>;
  /** Stores the key for a model server (an empty one forgets it), then checks the server with it. */
  connectServer(config: EngineConfig, apiKey?: string): Promise<Outcome<ServerCheck>>;
  saveApiKey(baseUrl: string, apiKey: string): Promise<Outcome<void>>;
  gpuCapability(): Promise<Outcome<GpuCapability>>;
  listModels(): Promise<Outcome<ModelList>>;
  downloadModel(id: string): Promise<Outcome<void>>;
  stopModelDownload(id: string): Promise<Outcome<boolean>>;
  loadModel(id: string): Promise<Outcome<SpeedRecord | undefined>>;
  deleteModel(id: string): Promise<Outcome<void>>;
  saveCustomModel(spec: Omit<CustomModelSpec, 'id'>): Promise<Outcome<string>>;
  removeCustomModel(id: string): Promise<Outcome<void>>;
  /** Every download and load reports to `listener`, also those a run starts. Returns a handle for unwatchModels. */
  watchModels(listener: Listener<[progress: ModelProgress]>): Promise<number>;
  unwatchModels(handle: number): Promise<void>;
  /** Copies picked GGUF files into this origin's private storage (never sent anywhere). */
  saveLocalModel(files: File[], onProgress?: Listener<[fraction: number]>): Promise<Outcome<{ key: string; name: string; bytes: number }>>;
  /** GGUF models kept in this browser for llama.cpp: downloads and copies of picked files. */
  listLlamaModels(): Promise<Outcome<StoredModel[]>>;
  deleteLlamaModel(id: string): Promise<Outcome<void>>;
  /** Loads the llama.cpp model (downloading it once) and measures its speed here. */
  measureWllama(config: EngineConfig, onProgress?: Listener<[progress: { stage: string; loaded: number; total: number }]>): Promise<Outcome<SpeedRecord>>;
  /** The mirror for the prompt files (the Settings field; empty: the pinned commit's raw files). */
  setPromptsBase(base: string): Promise<Outcome<void>>;
  /** Each pinned prompt file: here or not, where from, and why the last fetch failed. */
  promptFiles(): Promise<Outcome<PromptFileStatus[]>>;
  /** The MemAgent sets this browser holds, to show their templates. */
  promptSets(): Promise<Outcome<Partial<Record<FileSetId, PromptSet>>>>;
  /** Fetches the missing prompt files now (Settings' button); the status says what failed. */
  fetchPromptFiles(): Promise<Outcome<PromptFileStatus[]>>;
  /** A local copy of a pinned prompt file, checked by its hash before anything is kept. */
  importPromptFile(file: File): Promise<Outcome<PromptSetId>>;
}
