import * as Comlink from 'comlink';
import { type AgentApi, EVENTS_CHANNEL, type Outcome, type RunEvent } from '../agent/protocol';
import { fromWire } from '../engines/errors';
import { i18n } from './i18n';

/** The page's only doorway to the worker that owns ingestion and runs. */
export const agent = Comlink.wrap<AgentApi>(new Worker(new URL('../../workers/agent.worker.entry.ts', import.meta.url), { type: 'module', name: 'agent' }));

// The thread that hashes files beside their reading is made here, not in the worker: Firefox can hang for good
// making a worker inside a worker. It gets the worker's end of a channel and answers on it.
const hasher = new Worker(new URL('../../workers/hash.worker.ts', import.meta.url), { type: 'module', name: 'hash' });
hasher.onerror = () => void agent.hashingStopped();
void agent.hashingPort().then((port) => hasher.postMessage(port, [port]));

/** Unwraps a worker outcome, re-raising its error with its kind and message. */
export async function call<T>(outcome: Promise<Outcome<T>>): Promise<T> {
  const o = await outcome;
  if (!o.ok) throw fromWire({ ...o.error, message: o.error.message || i18n.t('shell.workerFailed') });
  return o.value;
}

export function onRunEvent(listener: (event: RunEvent) => void): () => void {
  const channel = new BroadcastChannel(EVENTS_CHANNEL);
  channel.onmessage = (e: MessageEvent<RunEvent>) => listener(e.data);
  return () => channel.close();
}
