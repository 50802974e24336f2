import { useEffect } from 'react';
import { onRunEvent } from './client';
import { store } from './data';
import { endNotice, type NoticePermission, progressTitle, shouldAskPermission, shouldNotify } from './read-notice';

const ASKED_KEY = 'memagent-notifications-asked';

function permission(): NoticePermission {
  return typeof Notification === 'undefined' ? 'unsupported' : Notification.permission;
}

function asked(): boolean {
  return localStorage.getItem(ASKED_KEY) !== null;
}

function ask(): void {
  // Remembered before the answer comes: whatever it is, the question is never put again.
  localStorage.setItem(ASKED_KEY, String(Date.now()));
  try {
    // Older WebKit answers through a callback and returns nothing: no promise to wait on, and nothing may throw into the Read press.
    void Promise.resolve(Notification.requestPermission()).catch(() => undefined);
  } catch {
    // A browser that will not ask: the read goes on without a notice.
  }
}

/**
 * Called in the Read button's own event, where the browser lets a page ask:
 * a read expected to take over a minute asks once for permission to say
 * when it ends.
 */
export function offerReadNotice(expectedMs: number | null | undefined): void {
  if (shouldAskPermission({ permission: permission(), asked: asked(), expectedMs })) ask();
}

async function notify(runId: string, title: string, body: string): Promise<void> {
  const url = `${location.origin}${location.pathname}?run=${encodeURIComponent(runId)}`;
  const options: NotificationOptions = { body, tag: `memagent-run-${runId}`, icon: 'icons/icon-192.png', data: { url } };
  // Through the service worker where there is one (the only way on Android, and a click there opens the run).
  const registration = await navigator.serviceWorker?.getRegistration().catch(() => undefined);
  if (registration) return registration.showNotification(title, options);
  const notice = new Notification(title, options);
  notice.onclick = () => {
    window.focus();
    notice.close();
  };
}

/**
 * The tab's title follows the reads under way ("37 % · memagent-web"), and a
 * read that took over a minute and ends while the tab is hidden is told by a
 * notification, where the person allowed them.
 */
export function useReadNotices(): void {
  useEffect(() => {
    let alive = true;
    let timer: ReturnType<typeof setTimeout> | undefined;
    // Runs this tab saw reading, with when it first saw each (the page's clock).
    const watched = new Map<string, number>();

    const refresh = async () => {
      timer = undefined;
      const s = await store;
      const reading = await s.readingProgress().catch(() => null);
      if (!alive || !reading) return;
      document.title = progressTitle(reading);
      const now = Date.now();
      const ids = new Set(reading.map((r) => r.runId));
      for (const id of ids) if (!watched.has(id)) watched.set(id, now);
      for (const [id, seen] of watched) {
        if (ids.has(id)) {
          // Only while the question may still be put: a run's record is not read at every step for nothing.
          if (permission() !== 'default' || asked()) continue;
          // A run that cannot be read is judged by when this tab first saw it.
          const run = await s.getRun(id).catch(() => undefined);
          const runningMs = now - Math.min(seen, run?.createdAt ?? seen);
          if (shouldAskPermission({ permission: permission(), asked: asked(), runningMs })) ask();
          continue;
        }
        watched.delete(id);
        // A run that cannot be read gets no notice: the notice is a courtesy.
        const run = await s.getRun(id).catch(() => undefined);
        if (!run) continue;
        const tookMs = now - Math.min(seen, run.createdAt);
        if (shouldNotify({ permission: permission(), hidden: document.visibilityState === 'hidden', tookMs, status: run.status })) {
          const { title, body } = endNotice(run);
          // A notice the browser refuses is a courtesy lost, nothing more.
          void notify(run.id, title, body).catch(() => undefined);
        }
      }
    };
    const soon = () => {
      timer ??= setTimeout(() => void refresh(), 250);
    };
    void refresh();
    const unsubscribe = onRunEvent((e) => {
      if (e.type !== 'revision' && e.type !== 'chunks' && e.type !== 'status') return;
      if (!watched.has(e.runId)) watched.set(e.runId, Date.now()); // a read that ends before the next look is still told
      soon();
    });
    // A step of a slow model may take longer than a minute: the "has run a minute" check does not wait for it.
    const tick = setInterval(() => {
      if (watched.size) soon();
    }, 15_000);
    return () => {
      alive = false;
      unsubscribe();
      clearInterval(tick);
      clearTimeout(timer);
      document.title = progressTitle([]);
    };
  }, []);
}
