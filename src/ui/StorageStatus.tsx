import { useCallback, useEffect, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { onRunEvent } from './client';
import { requestPersistence, storageSentence, useStorageFigure } from './storage-figure';
import './durability.css';

/** A service worker is active: the app loads and reads with no network. */
type Offline = 'ready' | 'pending' | 'unsupported';

async function readOffline(): Promise<Offline> {
  if (!('serviceWorker' in navigator)) return 'unsupported';
  // No registration to read shows as not ready offline yet.
  const registration = await navigator.serviceWorker.getRegistration().catch(() => undefined);
  return registration?.active ? 'ready' : 'pending';
}

/**
 * Whether the browser may evict this site's books and runs, how much room
 * they take, and whether the app works offline. Persistence is asked for once
 * a run starts in this tab (the moment there is work to lose) or on request.
 */
export function StorageStatus() {
  const { t } = useTranslation();
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
    <section aria-label={t('storage.title')} className="storage-status">
      <h2>{t('storage.title')}</h2>
      {sentence && usage !== undefined && quota ? (
        <>
          <meter aria-label={t('storage.used')} min={0} max={quota} value={usage} />
          <p className="hint">{sentence}</p>
        </>
      ) : (
        <p className="hint">{t('storage.unknown')}</p>
      )}
      {persisted === true ? (
        <p className="hint">{t('storage.persistent')}</p>
      ) : persisted === false ? (
        <>
          <p className="hint">
            {t('storage.notPersistent')} {asked || figure.declined ? t('storage.declined') : ''}
          </p>
          <button type="button" onClick={() => void ask()}>
            {t('storage.keep')}
          </button>
        </>
      ) : (
        <p className="hint">{t('storage.cannotPersist')}</p>
      )}
      <p className="hint">{offline === 'ready' ? t('storage.offlineReady') : offline === 'pending' ? t('storage.offlinePending') : t('storage.offlineNone')}</p>
    </section>
  );
}
