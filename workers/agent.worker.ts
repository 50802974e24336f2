/// <reference lib="webworker" />
import * as Comlink from 'comlink';
import type { EngineConfig } from '../src/engines/engine';
import { wireError } from '../src/engines/errors';
import { checkServer, ENGINES, createEngine, type EngineOptions, tokenizerFor } from '../src/engines/registry';
import { Library } from '../src/library/library';
import { BookCollections } from '../src/library/collections';
import { Runs } from '../src/runs/runs';
import { Evaluator } from '../src/runs/evaluator';
import { batchSize } from '../src/runs/batch-size';
import { EngineCache } from '../src/jobs/engines';
import type { ModelService } from '../src/engines/webllm/manager';
import type { CustomModelSpec, ModelProgress } from '../src/engines/webllm/models/models';
import { Store } from '../src/storage/db';
import { modelShelf } from '../src/jobs/model-shelf';
import {
  type AgentApi,
  type BatchSizeRequest,
  EVALUATION_EVENTS_CHANNEL,
  type EvaluationEvent,
  type EvaluationRequest,
  EVENTS_CHANNEL,
  type FileImport,
  HOLD_CHANNEL,
  type HoldMessage,
  type IngestRequest,
  type Outcome,
  type RunEvent,
  type RunRequest,
} from '../src/agent/protocol';
import { StepHold } from '../src/jobs/step-hold';
import { Watchers } from '../src/jobs/watchers';
import { loadApiKey, saveApiKey } from '../src/storage/secrets';
import { PromptLibrary } from '../src/runs/prompt-files';
import { InfmemFileLibrary } from '../src/runs/infmem-files';
import type { InfmemFileId } from '../src/core/infmem/official-files';
import { hashBesideWith } from '../src/ingest/hash-beside';
import { exposeOnce } from './expose-once';
import { tellQuietly, warnFailure } from '../src/core/failures';
import { estimateStorage } from '../src/engines/storage-room';

/** A server's key is looked up at each request, never stored on a run: a changed key takes effect at once. */
function storedKey(config: EngineConfig | undefined): EngineOptions {
  const baseUrl = config?.baseUrl;
  return typeof baseUrl === 'string' ? { apiKey: () => loadApiKey(baseUrl) } : {};
}

/** Runs and evaluation sweeps open their engines alike: the stored config, and the key kept for its server. One cache serves both. */
// The shelf keeps what an engine checks on this device (WebLLM's speculation verdict).
const engines = new EngineCache((engineId: string, config?: EngineConfig) => createEngine(engineId, config, { ...storedKey(config), speeds: shelf }));

// The worker owns every run and sweep; the page only asks and listens.
const channel = new BroadcastChannel(EVENTS_CHANNEL);
const sweepChannel = new BroadcastChannel(EVALUATION_EVENTS_CHANNEL);
// The gate a test holds a run's step with (see HoldMessage); nothing in the app posts there.
const holdChannel = new BroadcastChannel(HOLD_CHANNEL);
const hold = new StepHold((message) => holdChannel.postMessage(message));
holdChannel.onmessage = (e: MessageEvent<HoldMessage>) => hold.hear(e.data);
const store = Store.open();
// What the model managers ask to keep (speeds measured here, models added by URL), written by the store.
const shelf = modelShelf(store);
/** A few lines of ordinary prose, numbers and punctuation, counted once the tokenizer is loaded. */
const WARM_UP_TEXT = Array.from(
  { length: 40 },
  (_, i) =>
    `Chapter ${i + 1}. “Where were you on the ${i + 2}th of March?” she asked; he said nothing, and looked out at the grey harbour — ` +
    `the boats, the gulls, ${i * 37} barrels of salted fish and a ship’s bell that rang twice.\n\n`,
).join('');

// Every import and run counts tokens: load the tokenizer while the page is still being read, and count a
// little text with it, so that its code is compiled before a book needs it (the first count runs several times slower).
void tokenizerFor('extractive')
  .then((t) => t.count(WARM_UP_TEXT))
  .catch(() => undefined); // a warm-up only: a count a book needs reports its own failure

// The MemAgent prompt files: fetched whenever the app fetches anyway, kept in IndexedDB.
const prompts = new PromptLibrary(store);
/** Fetches the prompt files still missing, in the background: called where the app goes online anyway. */
const fetchPromptsAnyway = () => void prompts.refresh().catch(() => undefined);
// InfMem's two pinned files, kept beside them: fetched when asked or when a model's InfMem read needs them.
const infmemFiles = new InfmemFileLibrary(store);

/** Runs `work` holding Web Lock `name`, waiting for it while another tab holds it: one tab writes a job or stores a book. */
const withLock = (name: string, work: () => Promise<void>) => navigator.locks.request(name, () => work());

// Files are hashed on a thread the page makes, not one made here: Firefox can hang for good making a worker
// inside a worker. The page asks for this channel's other end and hands it to that thread; what is posted
// before it arrives waits in the channel.
const hashing = new MessageChannel();
const hashBeside = hashBesideWith(() => hashing.port1);

const house = store.then(async (s) => {
  const publish = (event: RunEvent) => channel.postMessage(event);
  const library = new Library({
    store: s,
    tokenizerFor,
    publish,
    withLock,
    tryLock: (name, work) =>
      navigator.locks.request(name, { ifAvailable: true }, async (lock) => {
        if (!lock) return false;
        await work();
        return true;
      }),
    estimateStorage: () => estimateStorage(),
    hashBeside,
  });
  const runs = new Runs({ store: s, library, engines, publish, withLock, prompts, infmemFiles, hold });
  const evaluator = new Evaluator({ store: s, engines, publish: (event) => sweepChannel.postMessage(event), withLock, prompts, infmemFiles });
  // Pauses and cancels from other tabs, and a standby for each job another tab starts reading.
  channel.onmessage = (e: MessageEvent<RunEvent>) => runs.handleControl(e.data);
  sweepChannel.onmessage = (e: MessageEvent<EvaluationEvent>) => evaluator.handleControl(e.data);
  // Books whose import a closed or crashed tab cut short are removed before anything else is served.
  await library.recoverImports().catch(warnFailure('Removing books whose import was cut short'));
  const collections = new BookCollections({ store: s, publish });
  return { library, runs, evaluator, collections };
});
const library = house.then((h) => h.library);
const runs = house.then((h) => h.runs);
const sweeps = house.then((h) => h.evaluator);
const collections = house.then((h) => h.collections);

// A book whose count a closed tab left unfinished is counted now.
// One that fails leaves the estimate, and the next start counts again.
void library.then((l) => l.counts.pending()).catch(() => undefined);

/**
 * Runs and sweeps that were running when their tab reloaded, closed or crashed
 * go on from their next chunk or sample, whichever page opens: every tab's
 * worker offers, and the job's Web Lock lets one of them write.
 */
async function resumeInterrupted(): Promise<void> {
  const [{ runs, evaluator }, s] = await Promise.all([house, store]);
  // The questions of one read resume together, so that their steps are still written in one batch.
  void runs.resumeReading().catch(warnFailure('Resuming runs'));
  for (const sweep of await s.listEvaluations())
    if (sweep.status === 'running') void evaluator.jobs.resume(sweep.id).catch(warnFailure(`Resuming evaluation ${sweep.id}`));
}
void resumeInterrupted().catch(warnFailure('Resuming interrupted runs'));

async function attempt<T>(work: () => Promise<T>): Promise<Outcome<T>> {
  try {
    return { ok: true, value: await work() };
  } catch (e) {
    return { ok: false, error: wireError(e) };
  }
}

// The model manager loads on first use: a page without WebGPU never pays for it.
let modelService: Promise<ModelService> | undefined;
const models = () => (modelService ??= import('../src/engines/webllm/manager').then((m) => new m.ModelService(shelf)));
const watchers = new Watchers();

/** The API protocol.ts declares and documents (AgentApi), served to the page. */
const api = {
  engines: async () => ENGINES,
  hashingPort: () => Comlink.transfer(hashing.port2, [hashing.port2]),
  hashingStopped: () => hashBeside.stopped(),
  ingest: ({ file, engineId, ...options }: FileImport, onProgress?: IngestRequest['onProgress'], onUsable?: IngestRequest['onUsable']) =>
    attempt(async () =>
      (await library).ingestFile(file, engineId, {
        ...options,
        onProgress,
        onUsable: tellQuietly(onUsable),
      }),
    ),
  deleteDocument: (id: string) => attempt(async () => (await library).deleteDocument(id)),
  saveCollection: (name: string, documentIds: string[], id?: string) => attempt(async () => (await collections).save(name, documentIds, id)),
  deleteCollection: (id: string) => attempt(async () => (await collections).delete(id)),
  startRun: (request: RunRequest) => attempt(async () => (await runs).start(request)),
  startRuns: (request: Omit<RunRequest, 'question'>, questions: string[]) => attempt(async () => (await runs).startMany(request, questions)),
  resumeRun: (runId: string) => attempt(async () => (await runs).jobs.resume(runId)),
  pauseRun: (runId: string) => attempt(async () => (await runs).jobs.pause(runId)),
  cancelRun: (runId: string) => attempt(async () => (await runs).jobs.cancel(runId)),
  pauseRead: (readId: string) => attempt(async () => (await runs).pauseRead(readId)),
  resumeRead: (readId: string) => attempt(async () => (await runs).resumeRead(readId)),
  cancelRead: (readId: string) => attempt(async () => (await runs).cancelRead(readId)),
  deleteRead: (readId: string) => attempt(async () => (await runs).deleteRead(readId)),
  deleteRun: (runId: string) => attempt(async () => (await runs).deleteRun(runId)),
  askFollowUp: (runId: string, question: string, onWriting?: (text: string) => unknown) =>
    attempt(async () => (await runs).askFollowUp(runId, question, onWriting && tellQuietly(onWriting))),
  findSources: (runId: string) => attempt(async () => (await runs).findSources(runId)),
  traceMemory: (runId: string, revision: number) => attempt(async () => (await runs).traceMemory(runId, revision)),
  startEvaluation: (request: EvaluationRequest, onRead?: (bytes: number, total: number) => unknown) =>
    attempt(async () => (await sweeps).start(request, tellQuietly(onRead))),
  resumeEvaluation: (id: string) => attempt(async () => (await sweeps).jobs.resume(id)),
  pauseEvaluation: (id: string) => attempt(async () => (await sweeps).jobs.pause(id)),
  cancelEvaluation: (id: string) => attempt(async () => (await sweeps).jobs.cancel(id)),
  deleteEvaluation: (id: string) => attempt(async () => (await sweeps).delete(id)),
  importRun: (json: string) => attempt(async () => (await runs).importRun(json)),
  connectServer: (config: EngineConfig, apiKey?: string) =>
    attempt(async () => {
      if (apiKey !== undefined && typeof config.baseUrl === 'string') await saveApiKey(config.baseUrl, apiKey);
      const check = await checkServer(config, storedKey(config));
      fetchPromptsAnyway(); // a server engine's first use
      return check;
    }),
  saveApiKey: (baseUrl: string, apiKey: string) => attempt(() => saveApiKey(baseUrl, apiKey)),
  gpuCapability: () => attempt(async () => (await models()).capability()),
  // The engine a read would open, from the same cache: the size the form shows is the one the read uses.
  batchSize: (request: BatchSizeRequest, questions: string[]) =>
    attempt(() => batchSize({ engines, prompts, lacks: async (config) => (await models()).lacks(config) }, request, questions)),
  listModels: () => attempt(async () => (await models()).list()),
  downloadModel: (id: string) => attempt(async () => (fetchPromptsAnyway(), (await models()).download(id))),
  stopModelDownload: (id: string) => attempt(async () => (await models()).stopDownload(id)),
  loadModel: (id: string) => attempt(async () => (fetchPromptsAnyway(), (await models()).load(id))),
  deleteModel: (id: string) => attempt(async () => (await models()).remove(id)),
  saveCustomModel: (spec: Omit<CustomModelSpec, 'id'>) => attempt(async () => (await models()).saveCustom(spec)),
  removeCustomModel: (id: string) => attempt(async () => (await models()).removeCustom(id)),
  watchModels: async (listener: (p: ModelProgress) => unknown) => {
    const stop = (await models()).watch(tellQuietly(listener));
    return watchers.add(stop);
  },
  unwatchModels: async (handle: number) => {
    watchers.remove(handle);
  },
  saveLocalModel: (files: File[], onProgress?: (fraction: number) => unknown) =>
    attempt(async () => (await import('../src/engines/wllama/picked-models')).saveLocalModel(files, tellQuietly(onProgress))),
  listLlamaModels: () => attempt(async () => (await import('../src/engines/wllama/files')).listStoredModels()),
  deleteLlamaModel: (id: string) => attempt(async () => (await import('../src/engines/wllama/files')).deleteStoredModel(id)),
  measureWllama: (config: EngineConfig, onProgress?: (p: { stage: string; loaded: number; total: number }) => unknown) =>
    attempt(async () => {
      fetchPromptsAnyway(); // the model is downloaded now
      return (await import('../src/engines/wllama/speed')).measureWllama(shelf, config, tellQuietly(onProgress));
    }),
  setPromptsBase: (base: string) => attempt(async () => prompts.setBase(base)),
  promptFiles: () => attempt(() => prompts.status()),
  promptSets: () => attempt(() => prompts.sets()),
  fetchPromptFiles: () => attempt(async () => (await prompts.refresh(), prompts.status())),
  importPromptFile: (file: File) => attempt(async () => (await prompts.import(file.name, new Uint8Array(await file.arrayBuffer()))).id),
  setInfmemBase: (id: InfmemFileId, base: string) => attempt(async () => infmemFiles.setBase(id, base)),
  infmemFiles: () => attempt(() => infmemFiles.status()),
  fetchInfmemFiles: () => attempt(() => infmemFiles.fetchMissing()),
  importInfmemFile: (file: File) => attempt(async () => infmemFiles.import(file.name, new Uint8Array(await file.arrayBuffer()))),
} satisfies AgentApi;

exposeOnce(globalThis, () => Comlink.expose(api));
