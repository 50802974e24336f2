import { useSyncExternalStore } from 'react';
import { onRunEvent } from './client';
import { formatBytes, formatNumber } from './format';
import { i18n } from './i18n';

/**
 * How much this site stores and may store, read once for the whole page so
 * that every place that shows it shows the same numbers.
 */
export interface StorageFigure {
  /** Bytes this site uses, as the browser counts them (books, runs, models, the app itself). */
  usage?: number;
  /** Bytes the browser allows this site. */
  quota?: number;
  /** null: the browser cannot tell (no StorageManager). */
  persisted: boolean | null;
  /** The browser was asked to keep the data and said no, in this tab. */
  declined: boolean;
}

const REFRESH_MS = 30_000;

let figure: StorageFigure | null = null;
let declined = false;
let reading: Promise<void> | null = null;
let again = false;
let stopWatching: (() => void) | null = null;
const listeners = new Set<() => void>();

async function read(): Promise<StorageFigure> {
  const storage = navigator.storage as StorageManager | undefined;
  const [persisted, estimate] = await Promise.all([
    storage?.persisted ? storage.persisted().catch(() => null) : Promise.resolve(null),
    storage?.estimate ? storage.estimate().catch(() => undefined) /* a figure the browser will not give shows as unknown */ : Promise.resolve(undefined),
  ]);
  const next: StorageFigure = { persisted, declined: declined && persisted !== true };
  if (estimate?.usage !== undefined) next.usage = estimate.usage;
  if (estimate?.quota !== undefined) next.quota = estimate.quota;
  return next;
}

/** Reads the figure again (after anything that stores or deletes); calls made while one is reading are merged into one more read. */
export function refreshStorage(): Promise<void> {
  if (reading) {
    again = true;
    return reading;
  }
  reading = (async () => {
    do {
      again = false;
      figure = await read();
      listeners.forEach((l) => l());
    } while (again);
    reading = null;
  })();
  return reading;
}

/** Asks the browser to keep this site's data when the disk runs low; remembers a refusal for this tab. */
export async function requestPersistence(): Promise<void> {
  const granted = await navigator.storage?.persist?.().catch(() => false);
  declined = !granted;
  await refreshStorage();
}

function watch(): () => void {
  void refreshStorage();
  const timer = setInterval(() => void refreshStorage(), REFRESH_MS);
  // Runs, imports and deletions change what is stored; the app itself is stored when the service worker is ready.
  const unsubscribe = onRunEvent((e) => {
    if (e.type === 'status' || e.type === 'document') void refreshStorage();
  });
  void navigator.serviceWorker?.ready.then(() => refreshStorage());
  return () => {
    clearInterval(timer);
    unsubscribe();
  };
}

function subscribe(listener: () => void): () => void {
  listeners.add(listener);
  stopWatching ??= watch();
  return () => {
    listeners.delete(listener);
    if (listeners.size === 0) {
      stopWatching?.();
      stopWatching = null;
    }
  };
}

/** The one storage figure; null until first read. */
export function useStorageFigure(): StorageFigure | null {
  return useSyncExternalStore(subscribe, () => figure);
}

/** Storage sizes, with gigabytes where they are that large. */
export function formatStorage(n: number): string {
  return n >= 1024 ** 3 ? i18n.t('units.gb', { n: formatNumber(n / 1024 ** 3, 1) }) : formatBytes(n);
}

/** "14.7 MB used of 10.0 GB this browser allows this site.", or null when the browser does not say. */
export function storageSentence(f: StorageFigure | null): string | null {
  if (f?.usage === undefined || !f.quota) return null;
  return i18n.t('storage.sentence', { used: formatStorage(f.usage), quota: formatStorage(f.quota) });
}
