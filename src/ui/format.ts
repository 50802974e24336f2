import { bookName } from '../core/book-set';
import { median } from '../core/estimate';
import type { DocumentRecord, RunRecord } from './data';
import { currentLanguage, i18n } from './i18n';

// Numbers, sizes, dates and durations in the interface's language; unit words come from its resources.
const formats = new Map<string, Intl.NumberFormat>();

/** A number as the interface's language writes it, with exactly `digits` decimals when given. */
export function formatNumber(n: number, digits?: number): string {
  const key = `${currentLanguage()}|${digits ?? ''}`;
  let f = formats.get(key);
  if (!f) {
    f = new Intl.NumberFormat(currentLanguage(), digits === undefined ? {} : { minimumFractionDigits: digits, maximumFractionDigits: digits });
    formats.set(key, f);
  }
  return f.format(n);
}

/** A moment, as date and time in the interface's language. */
export function formatDate(t: number): string {
  return new Intl.DateTimeFormat(currentLanguage(), { dateStyle: 'medium', timeStyle: 'short' }).format(t);
}

export function formatBytes(n: number): string {
  if (n < 1024) return i18n.t('units.bytes', { n: formatNumber(n) });
  if (n < 1024 * 1024) return i18n.t('units.kb', { n: formatNumber(Math.round(n / 1024)) });
  return i18n.t('units.mb', { n: formatNumber(n / 1024 / 1024, 1) });
}

/** "99,712 tokens", or "about 3,512,000 tokens (counting…)" while a long book is still being counted. */
export function formatTokens(doc: Pick<DocumentRecord, 'tokens' | 'tokensEstimated'>): string {
  if (!doc.tokensEstimated) return i18n.t('units.tokens', { n: formatNumber(doc.tokens) });
  const rounded = Math.round(doc.tokens / 1000) * 1000;
  return i18n.t('units.tokensCounting', { n: formatNumber(rounded) });
}

/** Whole tokens per second, with one decimal below 10 (a software GPU writes about one a second). */
export function formatSpeed(tokensPerSecond: number): string {
  return tokensPerSecond >= 10 ? formatNumber(Math.round(tokensPerSecond)) : formatNumber(tokensPerSecond, 1);
}

/** "about 3 min 20 s left", or "less than a second left". */
export function formatRemaining(ms: number): string {
  return ms < 1000 ? i18n.t('units.lessThanSecondLeft') : i18n.t('units.left', { duration: formatDuration(ms) });
}

export function formatDuration(ms: number): string {
  if (ms < 1000) return i18n.t('units.lessThanSecond');
  const s = Math.round(ms / 1000);
  if (s < 60) return i18n.t('units.s', { s: formatNumber(s) });
  const m = Math.floor(s / 60);
  if (m < 60) return i18n.t('units.minS', { m: formatNumber(m), s: formatNumber(s % 60) });
  return i18n.t('units.hMin', { h: formatNumber(Math.floor(m / 60)), m: formatNumber(m % 60) });
}

/**
 * Time left from the gaps between recent commits: the median gap ignores a
 * pause or a reload in between. Null until two chunks are done.
 */
export function estimateRemaining(committedAt: readonly number[], remaining: number): number | null {
  if (committedAt.length < 2) return null;
  const recent = committedAt.slice(-21);
  return median(recent.slice(1).map((t, i) => t - recent[i]!))! * remaining;
}

/** How a run's books are named (each by bookName): its book, a few books joined, or the first of many and how many more. */
export function formatRunBooks(run: Pick<RunRecord, 'documentName' | 'books'>): string {
  if (!run.books) return run.documentName;
  if (run.books.length <= 3) return run.books.map(bookName).join(' + ');
  return i18n.t('sets.nameMany', { first: bookName(run.books[0]!), count: run.books.length - 1 });
}
