import type { RunRecord, RunStatus } from './data';
import { formatRunBooks } from './format';
import { i18n } from './i18n';

/**
 * What the tab's title and a notification say about reads, decided apart from
 * the browser so that every rule is tested on its own.
 */
export const APP_TITLE = 'memagent-web';

/** A read shorter than this needs no notification, and no permission is asked for it. */
export const LONG_READ_MS = 60_000;

export interface ReadingProgress {
  read: number;
  total: number;
}

/**
 * "37 % · memagent-web" while reads are under way (several together count as
 * one), the plain title when none is. Never 100 % while reading: the answer
 * is still to be written after the last chunk.
 */
export function progressTitle(reads: readonly ReadingProgress[], base = APP_TITLE): string {
  if (reads.length === 0) return base;
  const read = reads.reduce((n, r) => n + Math.min(r.read, r.total), 0);
  const total = reads.reduce((n, r) => n + r.total, 0);
  const percent = total > 0 ? Math.min(99, Math.floor((100 * read) / total)) : 0;
  return `${percent} % · ${base}`;
}

export type NoticePermission = NotificationPermission | 'unsupported';

/**
 * Whether to ask for permission to notify: only for a read expected to take
 * over a minute, or one that has run a minute, and only once ever (a refusal,
 * or a prompt dismissed, is never asked again).
 */
export function shouldAskPermission(p: { permission: NoticePermission; asked: boolean; expectedMs?: number | null; runningMs?: number }): boolean {
  if (p.permission !== 'default' || p.asked) return false;
  return (p.expectedMs ?? 0) > LONG_READ_MS || (p.runningMs ?? 0) >= LONG_READ_MS;
}

/** Whether a read that just ended gets a notification: a long one, ended (not stopped by the person) while nobody looked at the tab. */
export function shouldNotify(p: { permission: NoticePermission; hidden: boolean; tookMs: number; status: RunStatus }): boolean {
  return p.permission === 'granted' && p.hidden && p.tookMs > LONG_READ_MS && (p.status === 'done' || p.status === 'failed');
}

/** The notification's words. */
export function endNotice(run: Pick<RunRecord, 'question' | 'documentName' | 'books' | 'status' | 'answer' | 'error'>): { title: string; body: string } {
  if (run.status === 'failed') {
    return {
      title: i18n.t('notice.stoppedTitle', { book: formatRunBooks(run) }),
      body: i18n.t('notice.stoppedBody', { error: run.error ?? i18n.t('notice.anError') }),
    };
  }
  return {
    title: i18n.t('notice.doneTitle', { book: formatRunBooks(run) }),
    body: i18n.t('notice.doneBody', { question: run.question, answer: run.answer ?? '' }),
  };
}
