import { useCallback, useEffect, useRef, useState } from 'react';
import { onRunEvent } from './client';
import { formatBytes } from './format';
import './durability.css';

interface State {
  /** null: the browser cannot tell (no StorageManager). */
  persisted: boolean | null;
  usage?: number;
  quota?: number;
  /** A service worker is active: the app loads and reads with no network. */
  offline: 'ready' | 'pending' | 'unsupported';
}

const REFRESH_MS = 30_000;

async function readState(): Promise<State> {
  const storage = navigator.storage as StorageManager | undefined;
  const [persisted, estimate, registration] = await Promise.all([
    storage?.persisted ? storage.persisted().catch(() => null) : Promise.resolve(null),
    storage?.estimate ? storage.estimate().catch(() => undefined) : Promise.resolve(undefined),
    'serviceWorker' in navigator ? navigator.serviceWorker.getRegistration().catch(() => undefined) : Promise.resolve(null),
  ]);
  const state: State = {
    persisted,
    offline: registration === null ? 'unsupported' : registration?.active ? 'ready' : 'pending',
  };
  if (estimate?.usage !== undefined) state.usage = estimate.usage;
  if (estimate?.quota !== undefined) state.quota = estimate.quota;
  return state;
}

function formatSize(n: number): string {
  return n >= 1024 ** 3 ? `${(n / 1024 ** 3).toFixed(1)} GB` : formatBytes(n);
}

/**
 * Whether the browser may evict this site's books and runs, how much room
 * they take, and whether the app works offline. Persistence is asked for once
 * a run starts in this tab (the moment there is work to lose) or on request.
 */
export function StorageStatus() {
  const [state, setState] = useState<State | null>(null);
  const [asked, setAsked] = useState(false);
  const askedOnce = useRef(false);

  const refresh = useCallback(async () => setState(await readState()), []);

  const ask = useCallback(async () => {
    askedOnce.current = true;
    setAsked(true);
    await navigator.storage?.persist?.().catch(() => false);
    await refresh();
  }, [refresh]);

  useEffect(() => {
    void refresh();
    // The first visit stores the app in the background; say so as soon as it is done.
    void navigator.serviceWorker?.ready.then(() => refresh());
    const timer = setInterval(() => void refresh(), REFRESH_MS);
    const unsubscribe = onRunEvent((e) => {
      if (e.type !== 'status') return;
      if (e.status === 'running' && !askedOnce.current) void ask();
      else void refresh();
    });
    return () => {
      clearInterval(timer);
      unsubscribe();
    };
  }, [refresh, ask]);

  if (!state) return null;
  const { persisted, usage, quota, offline } = state;
  return (
    <section aria-label="Storage" className="storage-status">
      <h2>Storage</h2>
      {usage !== undefined && quota ? (
        <>
          <meter aria-label="Storage used" min={0} max={quota} value={usage} />
          <p className="hint">
            {formatSize(usage)} used of {formatSize(quota)} this browser allows this site.
          </p>
        </>
      ) : (
        <p className="hint">This browser does not tell how much storage this site uses.</p>
      )}
      {persisted === true ? (
        <p className="hint">Persistent: the browser will not clear books and runs to free space.</p>
      ) : persisted === false ? (
        <>
          <p className="hint">
            Not persistent: the browser may clear books and runs when the disk runs low.{' '}
            {asked ? 'The browser declined for now; installing the app or bookmarking it often helps.' : ''}
          </p>
          <button type="button" onClick={() => void ask()}>
            Keep data persistent
          </button>
        </>
      ) : (
        <p className="hint">This browser cannot keep storage persistent; books and runs may be cleared when the disk runs low.</p>
      )}
      <p className="hint">
        {offline === 'ready'
          ? 'Offline: ready. The app and its extractive engine load and read with no network.'
          : offline === 'pending'
            ? 'Offline: getting ready (storing the app in this browser).'
            : 'Offline: not available in this browser.'}
      </p>
    </section>
  );
}
