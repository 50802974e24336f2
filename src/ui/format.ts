import { median } from '../core/estimate';
import type { DocumentRecord } from '../storage/db';

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(0)} KB`;
  return `${(n / 1024 / 1024).toFixed(1)} MB`;
}

/** "99,712 tokens", or "about 3,512,000 tokens (counting…)" while a long book is still being counted. */
export function formatTokens(doc: Pick<DocumentRecord, 'tokens' | 'tokensEstimated'>): string {
  if (!doc.tokensEstimated) return `${doc.tokens.toLocaleString('en')} tokens`;
  const rounded = Math.round(doc.tokens / 1000) * 1000;
  return `about ${rounded.toLocaleString('en')} tokens (counting…)`;
}

/** Whole tokens per second, with one decimal below 10 (a software GPU writes about one a second). */
export function formatSpeed(tokensPerSecond: number): string {
  return tokensPerSecond >= 10 ? Math.round(tokensPerSecond).toLocaleString('en') : tokensPerSecond.toFixed(1);
}

/** "about 3 min 20 s left", or "less than a second left". */
export function formatRemaining(ms: number): string {
  return ms < 1000 ? 'less than a second left' : `about ${formatDuration(ms)} left`;
}

export function formatDuration(ms: number): string {
  if (ms < 1000) return 'less than a second';
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min ${s % 60} s`;
  return `${Math.floor(m / 60)} h ${m % 60} min`;
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
