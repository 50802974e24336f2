import { useCallback, useEffect, useRef, useState } from 'react';
import { onRunEvent } from './client';
import { requestPersistence, storageSentence, useStorageFigure } from './storage-figure';
import './durability.css';

/** A service worker is active: the app loads and reads with no network. */
type Offline = 'ready' | 'pending' | 'unsupported';

async function readOffline(): Promise<Offline> {
  if (!('serviceWorker' in navigator)) return 'unsupported';
  const registration = await navigator.serviceWorker.getRegistration().catch(() => undefined);
  return registration?.active ? 'ready' : 'pending';
}

/**
 * Whether the browser may evict this site's books and runs, how much room
 * they take, and whether the app works offline. Persistence is asked for once
 * a run starts in this tab (the moment there is work to lose) or on request.
 */
export function StorageStatus() {
  const figure = useStorageFigure();
  const [offline, setOffline] = useState<Offline | null>(null);
  const [asked, setAsked] = useState(false);
  const askedOnce = useRef(false);

  const ask = useCallback(async () => {
    askedOnce.current = true;
    setAsked(true);
    await requestPersistence();
  }, []);

  useEffect(() => {
    const refresh = () => void readOffline().then(setOffline);
    refresh();
    // The first visit stores the app in the background; say so as soon as it is done.
    void navigator.serviceWorker?.ready.then(refresh);
    return onRunEvent((e) => {
      if (e.type === 'status' && e.status === 'running' && !askedOnce.current) void ask();
    });
  }, [ask]);

  if (!figure || !offline) return null;
  const { persisted, usage, quota } = figure;
  const sentence = storageSentence(figure);
  return (
    <section aria-label="Storage" className="storage-status">
      <h2>Storage</h2>
      {sentence && usage !== undefined && quota ? (
        <>
          <meter aria-label="Storage used" min={0} max={quota} value={usage} />
          <p className="hint">{sentence}</p>
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
            {asked || figure.declined ? 'The browser declined for now; installing the app or bookmarking it often helps.' : ''}
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
