import * as Comlink from 'comlink';
import type { AgentApi, Outcome } from '../agent/protocol';
import { Store } from '../storage/db';
import { i18n } from './i18n';
import { EVENTS_CHANNEL, type RunEvent } from '../agent/protocol';

/** The page's only doorway to the worker that owns ingestion and runs. */
export const agent = Comlink.wrap<AgentApi>(
  new Worker(new URL('../../workers/agent.worker.ts', import.meta.url), { type: 'module', name: 'agent' }),
);

/** The UI reads what storage says; the worker is the only writer. */
export const store: Promise<Store> = Store.open();

/** Unwraps a worker outcome, re-raising its error with its kind and message. */
export async function call<T>(outcome: Promise<Outcome<T>>): Promise<T> {
  const o = await outcome;
  if (!o.ok) {
    const err = new Error(o.error?.message ?? i18n.t('shell.workerFailed'));
    err.name = o.error?.name ?? 'Error';
    throw err;
  }
  return o.value as T;
}

export function onRunEvent(listener: (event: RunEvent) => void): () => void {
  const channel = new BroadcastChannel(EVENTS_CHANNEL);
  channel.onmessage = (e: MessageEvent<RunEvent>) => listener(e.data);
  return () => channel.close();
}
