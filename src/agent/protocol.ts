import type { SpeedRecord } from '../core/estimate';
import type { InfmemFileId } from '../core/infmem/official-files';
import type { InfmemMethod, ReadSettings } from '../core/plan';
import type { PromptSet, FileSetId, PromptSetId } from '../core/prompt-sets';
import type { PromptTemplates } from '../core/prompts';
import type { EvalMethod } from '../eval/infmem-read';
import type { BatchLimit, EngineConfig, EngineInfo } from '../engines/engine';
import type { WireError } from '../engines/errors';
import type { ServerCheck } from '../engines/openai/engine';
import type { GpuCapability } from '../engines/webllm/check/webgpu';
import type { CustomModelSpec, ModelProgress } from '../engines/webllm/models/models';
import type { StoredModel } from '../engines/wllama/files';
import type { ModelList } from '../engines/webllm/manager';
import type { MethodId } from '../eval/method';
import type { ReadingMode } from '../eval/sweep';
import type { TaskId } from '../eval/tasks';
import type { IngestProgress } from '../ingest/ingest';
import type { CollectionRecord, DocumentRecord, FollowUpRecord, StoredCitation } from '../storage/schema';

/*
 * What the page and the agent worker say to each other: the calls the worker
 * answers (over comlink), what each returns, and the events every tab hears
 * (over BroadcastChannel). The worker writes; the page asks, listens and reads.
 */

export * from './events';

/*
 * The requests the worker takes and the records it answers with that are its
 * own (not storage's): the library, runs and sweeps import them from here, so
 * that the protocol depends on nothing above it.
 */

/** How a book is imported: the options the page gives and the progress it hears. */
export interface IngestRequest {
  /** Cut Project Gutenberg's header and footer (default true). */
  stripGutenberg?: boolean;
  onProgress?(progress: IngestProgress): void;
  /**
   * The document can be read: it is stored with the first part of its text,
   * while the rest is still being written. The import's own promise settles
   * once the whole text is stored (or nothing of it is left).
   */
  onUsable?(doc: DocumentRecord): void;
}

/** A file to import, for `engineId`'s tokenizer to count (see AgentApi.ingest). */
export interface FileImport extends Pick<IngestRequest, 'stripGutenberg'> {
  /** Handed to the worker as a handle: its bytes are read there. */
  file: File;
  engineId: string;
}

/** A read to start: the book, the question, the engine, and the read settings (the defaults where absent). */
export interface RunRequest extends Partial<ReadSettings> {
  documentId: string;
  /** Several books read as one stream, in this order (see core/book-set); `documentId` is then the first. */
  documentIds?: readonly string[];
  question: string;
  engineId: string;
  engineConfig?: EngineConfig;
  /** The edited templates, read when `prompts` is 'custom' (or when no set is named). */
  templates?: PromptTemplates;
  /**
   * The prompt set: 'auto' (nothing chosen: MemAgent (paper) for a model once
   * its file is here), a set by name, or 'custom' for `templates`. Absent: the
   * templates given, or this app's wording.
   */
  prompts?: PromptChoice;
  /**
   * Read only the chunks most relevant to the question (off when absent);
   * follow names the memory finds, and with lookBack also to earlier chunks.
   */
  skim?: { keep: number; followMemory: boolean; lookBack?: boolean };
  /** Read the InfMem way (absent: MemAgent's): a planner searches the whole book before each chunk and may stop the read early. */
  method?: InfmemMethod;
}

/** What the Read form asks before a read: how many of its questions one batch holds on this device (see AgentApi.batchSize). */
export type BatchSizeRequest = Pick<RunRequest, 'engineId' | 'engineConfig' | 'chunkTokens' | 'memoryTokens' | 'prompts' | 'templates'>;

/**
 * How many questions' memories the engine writes together on this device,
 * and why in words (English, from the engine); or what it waits for before
 * that can be told: a GPU that runs the model, or the model's download.
 */
export type BatchSize = BatchLimit | { waitsFor: 'gpu' | 'download' };

/** What the person chose: a set, or nothing yet (the default for the engine). */
export type PromptChoice = 'auto' | PromptSetId;

/** A pinned file as this browser has it: MemAgent's prompt files and InfMem's alike. */
interface PinnedFileStatus {
  path: string;
  /** The pinned hash. */
  sha256: string;
  /** Where it is fetched from now (the pinned commit, or the mirror). */
  url: string;
  have: boolean;
  /** Where the kept copy came from, and when. */
  source?: string;
  savedAt?: number;
  /** Why the last fetch failed, if it did and the file is still missing. */
  error?: string;
}

/** One of MemAgent's pinned prompt files. */
export interface PromptFileStatus extends PinnedFileStatus {
  set: FileSetId;
  label: string;
}

/** One of InfMem's two pinned files. */
export interface InfmemFileStatus extends PinnedFileStatus {
  id: InfmemFileId;
}

export interface EvaluationRequest {
  engineId: string;
  /** Engine-specific choices, such as a model. */
  engineConfig?: EngineConfig;
  tasks: TaskId[];
  lengths: number[];
  samples: number;
  seed?: number;
  mode: ReadingMode;
  chunkTokens?: number;
  memoryTokens?: number;
  /** The "essay" haystack: the generated essay, or a stored document by id. */
  documentId?: string;
  /** Dataset files to read by the paper's method instead of generated tasks (tasks and lengths are then ignored). */
  dataset?: DatasetRequest;
  /** The methods that read the generated samples or the dataset's items, each the same ones (MemAgent's alone where absent). */
  methods?: EvalMethod[];
  /** InfMem's stop votes in a row that end a read. */
  earlyStop?: number;
  /** InfMem's two-stage thinking for a model's calls (on where absent). */
  thinking?: boolean;
}

export interface DatasetRequest {
  /** RULER-HotpotQA files (JSON list or JSON Lines), one per length. */
  files: readonly File[];
  /** Default: the method that reads what the prompt set's final template asks for (recurrent for MemAgent (paper)). */
  method?: MethodId;
  /** Items taken from each file, from its first; all when absent. */
  itemsPerFile?: number;
  /**
   * The prompt set, chosen as for a read: 'auto' (the default) is MemAgent
   * (paper) for a model once its file is here, this app's wording until then.
   */
  prompts?: PromptChoice;
  /** The edited templates, read when `prompts` is 'custom'. */
  templates?: PromptTemplates;
}

/** A sentence of a memory and where it came from, as the inspector's memory pane shows it. */
export interface NoteSources {
  text: string;
  /** Where the sentence is in the memory. */
  start: number;
  end: number;
  /** None: no source found in the book. */
  citations: StoredCitation[];
}

/** Where each sentence of one revision's memory came from (traceMemory). */
export interface MemorySources {
  notes: NoteSources[];
  /** Whether the book's sections were read; without them citations name revisions only. */
  sections: boolean;
}

/** What a call answers: its value, or its error as plain data (structured clone drops classes; `fromWire` rebuilds an engine failure's class). */
export type Outcome<T> = { ok: true; value: T } | { ok: false; error: WireError };

/** Callbacks arrive as Comlink.proxy from the page; what they return is ignored. */
type Listener<A extends unknown[]> = (...args: A) => unknown;

/**
 * The worker's API, declared and documented here only (the worker's object `satisfies` it). Every call that can fail answers an
 * Outcome; the five that cannot answer plainly: `engines`, `hashingPort`, `hashingStopped`, `watchModels` and `unwatchModels`.
 * The worker resumes interrupted jobs itself at start.
 */
export interface AgentApi {
  engines(): Promise<readonly EngineInfo[]>;
  /** The worker's end of its channel to the hashing thread, for the page to hand to the thread it makes (once). */
  hashingPort(): MessagePort;
  /** The hashing thread stopped: files are hashed in place from now on. */
  hashingStopped(): void;
  /**
   * Imports a file. `onProgress` follows the import bar; `onUsable` hears of
   * the document as soon as it can be read, while the rest of its text is
   * stored. The listeners are arguments of their own, not fields of `request`:
   * Comlink proxies a function only where it is an argument.
   */
  ingest(request: FileImport, onProgress?: IngestRequest['onProgress'], onUsable?: IngestRequest['onUsable']): Promise<Outcome<DocumentRecord>>;
  deleteDocument(id: string): Promise<Outcome<{ runs: number }>>;
  /** Keeps books under a name (a collection), in reading order; with `id`, replaces that collection. */
  saveCollection(name: string, documentIds: string[], id?: string): Promise<Outcome<CollectionRecord>>;
  /** Forgets a collection; its books stay. */
  deleteCollection(id: string): Promise<Outcome<void>>;
  startRun(request: RunRequest): Promise<Outcome<string>>;
  /** One run per question over the same book, sharing its chunk list; returns their ids in the questions' order. */
  startRuns(request: Omit<RunRequest, 'question'>, questions: string[]): Promise<Outcome<string[]>>;
  resumeRun(runId: string): Promise<Outcome<void>>;
  pauseRun(runId: string): Promise<Outcome<void>>;
  cancelRun(runId: string): Promise<Outcome<void>>;
  deleteRun(runId: string): Promise<Outcome<void>>;
  /** The questions of one read (one press of Read) as one: each that can be is paused, resumed together, cancelled or deleted. */
  pauseRead(readId: string): Promise<Outcome<void>>;
  resumeRead(readId: string): Promise<Outcome<void>>;
  cancelRead(readId: string): Promise<Outcome<void>>;
  deleteRead(readId: string): Promise<Outcome<void>>;
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
  /** Deletes a sweep that is not running, with its samples and dataset items. */
  deleteEvaluation(id: string): Promise<Outcome<void>>;
  importRun(json: string): Promise<Outcome<string>>;
  /** Stores the key for a model server (an empty one forgets it), then checks the server with it. */
  connectServer(config: EngineConfig, apiKey?: string): Promise<Outcome<ServerCheck>>;
  saveApiKey(baseUrl: string, apiKey: string): Promise<Outcome<void>>;
  gpuCapability(): Promise<Outcome<GpuCapability>>;
  /**
   * How many of `questions` one batch would hold on this device, at the step size a read of them would plan (the
   * engine's own batchLimit); the model's weights are not loaded to tell. Undefined for an engine with no device
   * batch (all but WebLLM) or settings a read would refuse.
   */
  batchSize(request: BatchSizeRequest, questions: string[]): Promise<Outcome<BatchSize | undefined>>;
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
  /** The mirror for one of InfMem's two files (empty: the pinned commit's raw file). */
  setInfmemBase(id: InfmemFileId, base: string): Promise<Outcome<void>>;
  /** InfMem's two pinned files: here or not, where from, and why the last fetch failed. */
  infmemFiles(): Promise<Outcome<InfmemFileStatus[]>>;
  /** Fetches InfMem's files still missing now; the status says what failed. */
  fetchInfmemFiles(): Promise<Outcome<InfmemFileStatus[]>>;
  /** A local copy of either of InfMem's files, known by its hash before anything is kept. */
  importInfmemFile(file: File): Promise<Outcome<InfmemFileId>>;
}
