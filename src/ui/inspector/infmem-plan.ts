/** An InfMem step in words, as the inspector and its timeline say it, and the passage a source opened lies in. */
import type { RetrievedPassage, RevisionRecord, RunRecord } from '../data';
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

/** A chunk of a finished InfMem read that it never read, when `selected` names one (a passage's link opens it); else null. */
export function neverReadChunk(
  run: Pick<RunRecord, 'status' | 'chunks' | 'infmem'>,
  selected: number | null,
): { index: number; start: number; end: number } | null {
  const stopped = run.status === 'done' ? run.infmem?.stopped : undefined;
  if (!stopped || selected === null || selected < stopped.index) return null;
  const chunk = run.chunks[selected];
  return chunk ? { index: selected, start: chunk.start, end: chunk.end } : null;
}

/** Where searches retrieved passages of `chunk`: each step (revision index) once, with the passages' numbers (from 1) in its list. */
export function retrievedFrom(revisions: readonly Pick<RevisionRecord, 'index' | 'plan'>[], chunk: number): { step: number; ks: number[] }[] {
  return revisions.flatMap((r) => {
    const ks = (r.plan?.retrieved ?? []).flatMap((p, i) => (p.chunk === chunk ? [i + 1] : []));
    return ks.length ? [{ step: r.index, ks }] : [];
  });
}

/**
 * Where a passage's link opens it: its chunk, with the passage marked; where it
 * holds the sentence a source opened, that sentence, so that following a source
 * through the passage ends on the sentence itself.
 */
export function passageTarget(passage: RetrievedPassage, cited: Pick<CitedMark, 'start' | 'end'> | null): { revision: number; start: number; end: number } {
  const holds = cited && cited.start >= passage.start && cited.end <= passage.end;
  return { revision: passage.chunk, start: holds ? cited.start : passage.start, end: holds ? cited.end : passage.end };
}
