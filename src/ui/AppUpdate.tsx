/// <reference types="vite-plugin-pwa/react" />
import { useEffect, useState } from 'react';
import { useRegisterSW } from 'virtual:pwa-register/react';
import { useTranslation } from 'react-i18next';
import './durability.css';

const HOUR = 60 * 60 * 1000;
/** How long Update waits for the new version to take over the page before it reloads the page anyway. */
const TAKE_OVER_MS = 5000;

/**
 * Registers the service worker and offers a new version when one is waiting.
 * The new version only takes over when the person presses Update: the page
 * then reloads, and a run that was reading resumes from its next chunk.
 * (Whether the app works offline is shown in the Storage region.)
 */
export function AppUpdate() {
  const { t } = useTranslation();
  const {
    needRefresh: [needRefresh, setNeedRefresh],
    updateServiceWorker,
  } = useRegisterSW({
    onRegisteredSW(_url, registration) {
      // A tab left reading for hours still hears about a new version.
      if (registration) setInterval(() => void registration.update().catch(() => undefined), HOUR);
    },
  });

  const waiting = useWaitingVersion(needRefresh);

  const update = async () => {
    // The page reloads once the new version controls it. Workbox's own reload waits for an event it does
    // not send for every update, so the page listens itself; a version another tab made active is loaded at once.
    const sw = navigator.serviceWorker;
    sw?.addEventListener('controllerchange', () => location.reload(), { once: true });
    const waiting = (await sw?.getRegistration())?.waiting;
    if (!waiting) return location.reload();
    await updateServiceWorker(true);
    // A new version waits while the old one still serves this page a request; leaving the page lets it take over.
    setTimeout(() => location.reload(), TAKE_OVER_MS);
  };

  if (!needRefresh || !waiting) return null;
  return (
    <div role="status" aria-label={t('update.region')} className="app-status">
      <span>{t('update.ready')}</span>
      <button type="button" onClick={() => void update()}>
        {t('update.update')}
      </button>
      <button type="button" onClick={() => setNeedRefresh(false)}>
        {t('update.later')}
      </button>
    </div>
  );
}

/**
 * Whether a new version is waiting now, while `asked`: Workbox may announce one
 * that never waits (Firefox, when the first visit is reloaded while the app is
 * being stored: a second copy of the same version waits a moment and is then
 * dropped). The offer stands only while a version really waits.
 */
function useWaitingVersion(asked: boolean): boolean {
  const [waiting, setWaiting] = useState(false);
  useEffect(() => {
    if (!asked) return;
    let live = true;
    const check = async () => {
      // No registration to read means no update waiting.
      const sw = (await navigator.serviceWorker?.getRegistration().catch(() => undefined))?.waiting;
      if (!live) return;
      setWaiting(!!sw);
      sw?.addEventListener('statechange', () => void check(), { once: true });
    };
    void check();
    return () => {
      live = false;
    };
  }, [asked]);
  return asked && waiting;
}
