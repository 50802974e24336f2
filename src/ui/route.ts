import { useSyncExternalStore } from 'react';

/**
 * The app's places, as hash routes (#/library) so that any static host, and the
 * service worker offline, serves every one from index.html. A run's own URL
 * (?run=…&rev=…) sits in the query, beside the place.
 */
export type Place = 'read' | 'library' | 'models' | 'evaluate';

export const PLACES: readonly { id: Place; hash: string }[] = [
  { id: 'read', hash: '#/' },
  { id: 'library', hash: '#/library' },
  { id: 'models', hash: '#/models' },
  { id: 'evaluate', hash: '#/evaluate' },
];

export function placeOf(hash: string): Place {
  const name = hash.replace(/^#\/?/, '').split(/[/?]/)[0];
  return PLACES.find((p) => p.id === name)?.id ?? 'read';
}

const listeners = new Set<() => void>();
const notify = () => listeners.forEach((l) => l());

function subscribe(listener: () => void): () => void {
  if (listeners.size === 0) {
    window.addEventListener('hashchange', notify);
    window.addEventListener('popstate', notify);
  }
  listeners.add(listener);
  return () => {
    listeners.delete(listener);
    if (listeners.size === 0) {
      window.removeEventListener('hashchange', notify);
      window.removeEventListener('popstate', notify);
    }
  };
}

/** The place the address names, following links, Back and Forward. */
export function usePlace(): Place {
  return useSyncExternalStore(subscribe, () => placeOf(location.hash));
}

/** Calls `listener` when Back or Forward changes the address. */
export function onHistory(listener: () => void): () => void {
  window.addEventListener('popstate', listener);
  return () => window.removeEventListener('popstate', listener);
}

let arrivalFocus: (() => HTMLElement | null) | null = null;

/** Where focus goes as the place `goTo` went to shows, instead of its heading; asked once. */
export function takeArrivalFocus(): HTMLElement | null {
  const focus = arrivalFocus;
  arrivalFocus = null;
  return focus?.() ?? null;
}

/**
 * Goes to a place as a link would (a new history entry, so Back returns),
 * setting or removing query parameters on the way; `focus` names where
 * focus goes there, where not the place's heading.
 */
export function goTo(place: Place, params: Record<string, string | null> = {}, focus?: () => HTMLElement | null): void {
  if (focus) {
    // Arriving at another place, the shell moves focus once the place shows; staying, it moves once this change is drawn.
    if (placeOf(location.hash) !== place) arrivalFocus = focus;
    else requestAnimationFrame(() => focus()?.focus());
  }
  const url = new URL(location.href);
  for (const [name, value] of Object.entries(params)) {
    if (value === null) url.searchParams.delete(name);
    else url.searchParams.set(name, value);
  }
  url.hash = PLACES.find((p) => p.id === place)!.hash;
  if (url.href === location.href) return;
  history.pushState(null, '', url);
  notify();
}

/** The run the address names (?run=…), or null. */
export function runIdFromUrl(): string | null {
  return new URLSearchParams(location.search).get('run');
}

/** The revision in the URL, 1-based there, 0-based here; null to follow the newest. */
export function revisionFromUrl(): number | null {
  const rev = Number(new URLSearchParams(location.search).get('rev'));
  return Number.isInteger(rev) && rev >= 1 ? rev - 1 : null;
}

/** A cited sentence's place: the revision that holds it and its span in that revision's section. */
export interface CitedPlace {
  revision: number;
  start: number;
  end: number;
}

/** The cited sentence in the URL (?cite=start-end, with the revision that holds it), from a source's link; null without one. */
export function citedFromUrl(): CitedPlace | null {
  const params = new URLSearchParams(location.search);
  const revision = revisionFromUrl();
  const m = /^(\d+)-(\d+)$/.exec(params.get('cite') ?? '');
  return revision !== null && m ? { revision, start: Number(m[1]), end: Number(m[2]) } : null;
}

/**
 * Each run and revision has a URL that survives a reload and can be opened in
 * another tab; a source's adds its sentence. With `push` the change is a new
 * history entry (Back returns to what was shown); else it replaces the current one.
 */
export function showInUrl(
  runId: string,
  revision: number | null = null,
  cited: { start: number; end: number } | null = null,
  { push = false }: { push?: boolean } = {},
): void {
  const url = new URL(location.href);
  url.searchParams.set('run', runId);
  if (revision === null) url.searchParams.delete('rev');
  else url.searchParams.set('rev', String(revision + 1));
  if (cited) url.searchParams.set('cite', `${cited.start}-${cited.end}`);
  else url.searchParams.delete('cite');
  if (push && url.href !== location.href) history.pushState(null, '', url);
  else history.replaceState(null, '', url);
}

/** Takes a run (deleted) out of the address. */
export function forgetRunInUrl(): void {
  const url = new URL(location.href);
  for (const name of ['run', 'rev', 'cite']) url.searchParams.delete(name);
  history.replaceState(null, '', url);
}
