import { modelKey } from '../core/estimate';
import { CHUNK_TOKENS } from '../core/infmem/retrieval';
import { REPLY_TOKENS } from '../core/infmem/thinking';
import type { RunRecord } from './data';
import { i18n } from './i18n';
import type { ReadFormSettings } from './settings';
import { sentences } from './sentences';

/** The reads an estimate counts from: finished InfMem reads this many, newest first. */
const PAST_READS = 9;

/**
 * How early past InfMem reads with this engine and model stopped: how many
 * finished ones there are (up to PAST_READS, newest first) and the share of
 * their chunks they read on average, in percent; null where there is none.
 */
export function infmemStops(runs: readonly RunRecord[], engineId: string, model: string): { count: number; share: number } | null {
  const past = runs
    .filter((r) => r.method && r.status === 'done' && r.chunks.length > 0 && r.engineId === engineId && modelKey(r.engineConfig) === model)
    .sort((a, b) => b.createdAt - a.createdAt)
    .slice(0, PAST_READS);
  if (!past.length) return null;
  const shares = past.map((r) => (r.infmem?.stopped ? r.infmem.stopped.index : r.chunks.length) / r.chunks.length);
  return { count: past.length, share: Math.round((100 * shares.reduce((a, b) => a + b, 0)) / past.length) };
}

/** The settings an estimate reads with: InfMem's own chunk and memory sizes, and no skim, where the form asks for InfMem. */
export function estimatedSettings(settings: ReadFormSettings): ReadFormSettings {
  return settings.method === 'infmem' ? { ...settings, chunkTokens: CHUNK_TOKENS, memoryTokens: REPLY_TOKENS, skim: false } : settings;
}

/** What the estimate adds for an InfMem read: that it may stop early, and how early past reads with this engine and model stopped. */
export function infmemNote(settings: ReadFormSettings, runs: readonly RunRecord[], engineId: string, model: string): string {
  if (settings.method !== 'infmem') return '';
  const past = infmemStops(runs, engineId, model);
  return sentences(i18n.t('infmem.mayStop'), past ? i18n.t('infmem.pastStops', past) : '');
}
