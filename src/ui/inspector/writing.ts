import type { WritingStats } from '../../core/generation';
import type { RevisionRecord, RunRecord } from '../data';
import { i18n } from '../i18n';

/** How a revision's memory was written: "written in N passes (A of D drafted tokens accepted)". */
export function describeWriting(writing: WritingStats): string {
  const drafts = i18n.t('timeline.drafts', { count: writing.drafted, accepted: writing.accepted });
  return i18n.t('timeline.writing', { count: writing.passes, drafts });
}

/**
 * Whether a WebLLM run asked for speculative writing, and, once it has
 * revisions, how many of them were written that way: a run that asked for it
 * may still have written plainly (a library without batch verification, a
 * device whose check found a mismatch). Undefined for other engines.
 */
export function describeSpeculation(
  run: Pick<RunRecord, 'engineId' | 'engineConfig'>,
  revisions?: readonly Pick<RevisionRecord, 'writing'>[],
): string | undefined {
  if (run.engineId !== 'webllm') return undefined;
  if (run.engineConfig?.speculate === false) return i18n.t('runSettings.speculateOff');
  if (!revisions?.length) return i18n.t('runSettings.speculateOn');
  const used = revisions.filter((r) => r.writing).length;
  return used ? i18n.t('runSettings.speculateUsed', { count: revisions.length, used }) : i18n.t('runSettings.speculateUnused');
}
