/// <reference lib="webworker" />
import * as Comlink from 'comlink';
import type { EngineConfig } from '../src/engines/engine';
import { checkServer, ENGINES, createEngine, type EngineOptions, tokenizerFor } from '../src/engines/registry';
import { type IngestRequest, Runner, type RunRequest } from '../src/runner/runner';
import { type EvaluationRequest, evaluationService } from '../src/runner/evaluation';
import { EVENTS_CHANNEL, type RunEvent, Store } from '../src/storage/db';
import { loadApiKey, saveApiKey } from '../src/storage/secrets';

/** A server's key is looked up at each request, never stored on a run: a changed key takes effect at once. */
function storedKey(config: EngineConfig | undefined): EngineOptions {
  const baseUrl = config?.baseUrl;
  return typeof baseUrl === 'string' ? { apiKey: () => loadApiKey(baseUrl) } : {};
}

// The worker owns every run; the page only asks and listens.
const channel = new BroadcastChannel(EVENTS_CHANNEL);
const store = Store.open();

const runner = store.then(
  (s) =>
    new Runner({
      store: s,
      createEngine: (engineId, config) => createEngine(engineId, config, storedKey(config)),
      tokenizerFor,
      publish: (event) => channel.postMessage(event),
      withLock: (name, work) => navigator.locks.request(name, () => work()),
      estimateStorage: () => navigator.storage.estimate(),
    }),
);

channel.onmessage = async (e: MessageEvent<RunEvent>) => (await runner).handleControl(e.data);

/** Errors cross to the page as plain data, so their message and kind survive. */
export interface Outcome<T> {
  ok: boolean;
  value?: T;
  error?: { name: string; message: string };
}

async function attempt<T>(work: () => Promise<T>): Promise<Outcome<T>> {
  try {
    return { ok: true, value: await work() };
  } catch (e) {
    const err = e instanceof Error ? e : new Error(String(e));
    return { ok: false, error: { name: err.name, message: err.message } };
  }
}

const api = {
  engines: async () => ENGINES,
  /** `onProgress` arrives as a Comlink.proxy from the page: the import bar follows it. */
  ingest: (file: File, engineId: string, options: { stripGutenberg?: boolean } = {}, onProgress?: IngestRequest['onProgress']) =>
    attempt(async () => (await runner).ingestFile(file, engineId, { ...options, onProgress })),
  deleteDocument: (id: string) => attempt(async () => (await runner).deleteDocument(id)),
  startRun: (request: RunRequest) => attempt(async () => (await runner).start(request)),
  resumeRun: (runId: string) => attempt(async () => (await runner).resume(runId)),
  pauseRun: (runId: string) => attempt(async () => (await runner).pause(runId)),
  cancelRun: (runId: string) => attempt(async () => (await runner).cancel(runId)),
  deleteRun: (runId: string) => attempt(async () => (await runner).deleteRun(runId)),
  startEvaluation: (request: EvaluationRequest) => attempt(async () => (await evaluationService(store)).start(request)),
  resumeEvaluation: (id: string) => attempt(async () => (await evaluationService(store)).resume(id)),
  pauseEvaluation: (id: string) => attempt(async () => (await evaluationService(store)).pause(id)),
  cancelEvaluation: (id: string) => attempt(async () => (await evaluationService(store)).cancel(id)),
  importRun: (json: string) => attempt(async () => (await runner).importRun(json)),
  /** Stores the key for a model server (an empty one forgets it), then checks the server with it. */
  connectServer: (config: EngineConfig, apiKey?: string) =>
    attempt(async () => {
      if (apiKey !== undefined && typeof config.baseUrl === 'string') await saveApiKey(config.baseUrl, apiKey);
      return checkServer(config, storedKey(config));
    }),
  saveApiKey: (baseUrl: string, apiKey: string) => attempt(() => saveApiKey(baseUrl, apiKey)),
};

export type AgentApi = typeof api;

Comlink.expose(api);
