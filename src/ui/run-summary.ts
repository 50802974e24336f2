import { DEFAULT_READ_SETTINGS } from '../core/plan';
import type { RunRecord } from './data';
import { formatDate, formatNumber } from './format';
import { i18n } from './i18n';

/** What tells one run from another over the same book and question: when, with which engine and model. */
export function runMade(run: Pick<RunRecord, 'createdAt' | 'engineId' | 'engineConfig'>): string {
  const model = run.engineConfig?.model;
  return [formatDate(run.createdAt), i18n.t(`engines.${run.engineId}.label`, { defaultValue: run.engineId }), typeof model === 'string' ? model : '']
    .filter(Boolean)
    .join(' · ');
}

/** The settings a run changed from the defaults, as short phrases ("2,000-token chunks"); empty for a run made with the defaults. */
export function runChanges(run: Pick<RunRecord, 'settings' | 'skim'>): string[] {
  const s = run.settings;
  const d = DEFAULT_READ_SETTINGS;
  const chunk = s.requestedChunkTokens ?? s.chunkTokens;
  return [
    chunk !== d.chunkTokens && i18n.t('runs.chunk', { n: formatNumber(chunk) }),
    s.memoryTokens !== d.memoryTokens && i18n.t('runs.memory', { n: formatNumber(s.memoryTokens) }),
    s.temperature !== d.temperature && i18n.t('runs.temperature', { n: formatNumber(s.temperature) }),
    s.topP !== d.topP && i18n.t('runs.topP', { n: formatNumber(s.topP) }),
    s.seed !== undefined && i18n.t('runs.seed', { n: s.seed }),
    run.skim && i18n.t('runs.skim', { n: Math.round(run.skim.keep * 100) }),
  ].filter((p): p is string => typeof p === 'string');
}
