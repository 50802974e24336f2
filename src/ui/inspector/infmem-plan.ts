/** An InfMem step in words, as the inspector and its timeline say it, and the passage a source opened lies in. */
import type { RevisionRecord } from '../data';
import { i18n } from '../i18n';
import type { CitedMark } from './RevisionDetail';

/** What a planner did before a chunk, in words: its searches, or its vote to stop, with the votes in a row. */
export function planWords(plan: NonNullable<RevisionRecord['plan']>, limit: number): string {
  if (plan.queries.length) return i18n.t('infmem.searched', { queries: plan.queries.map((q) => `“${q}”`).join(', ') });
  return plan.stop ? i18n.t('infmem.voted', { votes: plan.votes, limit }) : i18n.t('infmem.noSearch', { votes: plan.votes, limit });
}

/** An InfMem revision's plan, as a timeline entry says it: its searches, or its vote to stop; '' for MemAgent's. */
export function planEntry(r: RevisionRecord, earlyStop: number | undefined): string {
  const plan = r.plan;
  if (!plan) return '';
  if (plan.queries.length) return i18n.t('infmem.entrySearched', { queries: plan.queries.map((q) => `“${q}”`).join(', ') });
  return plan.votes > 0 ? i18n.t('infmem.entryVoted', { votes: plan.votes, limit: earlyStop ?? plan.votes }) : '';
}

/** The passage a source's sentence lies in, where the step's own chunk does not hold it; -1 for none. */
export function citedPassage(revision: Pick<RevisionRecord, 'start' | 'end' | 'plan'>, cited: CitedMark | null | undefined): number {
  if (!cited || (cited.start >= revision.start && cited.end <= revision.end)) return -1;
  return revision.plan?.retrieved.findIndex((p) => cited.start >= p.start && cited.end <= p.end) ?? -1;
}
