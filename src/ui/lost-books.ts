import type { DocumentRecord } from './data';

/*
 * After a crash Chromium may delete a database it finds damaged, and clearing
 * site data deletes it too: the library then opens empty, and nothing in
 * IndexedDB can tell. localStorage, kept apart, remembers that books were
 * stored, so that the page can say what happened instead of showing an empty
 * library as if it had always been empty.
 */

const KEY = 'memagent-library';
/** 'held': the database held a whole book when last listed; 'lost': it opened empty since, and the person has not yet been told. */
type Mark = 'held' | 'lost';

const listeners = new Set<() => void>();
let listedOnce = false;

function mark(): Mark | null {
  try {
    const value = localStorage.getItem(KEY);
    return value === 'held' || value === 'lost' ? value : null;
  } catch {
    return null; // storage refused (a locked-down browser): nothing is remembered, nothing is told
  }
}

function setMark(value: Mark | null): void {
  if (mark() === value) return;
  try {
    if (value) localStorage.setItem(KEY, value);
    else localStorage.removeItem(KEY);
  } catch {
    // as above
  }
  for (const listener of listeners) listener();
}

/**
 * Hears each listing of the library. The first listing of the page decides
 * whether books were lost: none stored although some were before. Later ones
 * keep the mark up to date; an empty library after the person deleted its
 * last book is no loss.
 */
export function noteLibrary(docs: readonly DocumentRecord[]): void {
  const first = !listedOnce;
  listedOnce = true;
  if (docs.some((d) => !d.importing)) setMark('held');
  else if (docs.length === 0 && first && mark()) setMark('lost');
  else if (docs.length === 0 && mark() !== 'lost') setMark(null);
}

/**
 * The person is deleting a book. When no whole book would be left, the mark
 * goes now, before the worker deletes: a reload straight after must not find
 * the mark with an empty library and take the deletion for a loss. Should the
 * deletion fail, the next listing sets the mark again.
 */
export function noteDeleting(id: string, docs: readonly DocumentRecord[]): void {
  if (!docs.some((d) => d.id !== id && !d.importing) && mark() === 'held') setMark(null);
}

/** Whether the page should say that the stored books are gone. */
export function booksLost(): boolean {
  return mark() === 'lost';
}

/** The person has read the notice: it is not shown again. */
export function dismissLostBooks(): void {
  setMark(null);
}

/** Calls `listener` when the mark changes, here or in another tab; returns a function that stops. */
export function onLostBooks(listener: () => void): () => void {
  const fromOtherTab = (e: StorageEvent) => e.key === KEY && listener();
  listeners.add(listener);
  addEventListener('storage', fromOtherTab);
  return () => {
    listeners.delete(listener);
    removeEventListener('storage', fromOtherTab);
  };
}
