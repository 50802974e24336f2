import { useTranslation } from 'react-i18next';
import type { PromptRecord } from '../../core/prompt-sets';
import { CUTTER_LABELS } from '../../core/token-slices';
import type { RevisionRecord, RunRecord } from '../data';
import { i18n } from '../i18n';
import { describeSpeculation } from './writing';

/** How a skim chose its chunks, with how many the memory's names added. */
function describeSkim(run: RunRecord): string {
  const skim = run.skim!;
  const count = (by: string) => run.chunks.filter((c) => c.reason?.by === by).length;
  // Runs stored before reasons were kept cannot say how many were followed.
  const counted = run.chunks.some((c) => c.reason)
    ? i18n.t(skim.lookBack ? 'runSettings.countedBack' : 'runSettings.counted', { followed: count('followed'), back: count('looked-back') })
    : '';
  const follow = skim.followMemory ? i18n.t(skim.lookBack ? 'runSettings.followBack' : 'runSettings.follow', { counted }) : '';
  return i18n.t('runSettings.skim', { read: run.chunks.length, total: skim.totalChunks, top: Math.round(skim.keep * 100), follow });
}

/** The set, and for MemAgent's the file, commit and hash it was read from. */
function describePrompts(p: PromptRecord): string {
  if (!p.file) return p.label;
  const from = p.file.source ? `, ${p.file.source.startsWith('imported') ? p.file.source : i18n.t('prompts.fetchedFrom', { source: p.file.source })}` : '';
  return i18n.t('runSettings.promptFile', { label: p.label, path: p.file.path, commit: p.file.commit.slice(0, 7), sha: p.file.sha256, from });
}

/** The exact settings and templates a run used; with its revisions, how many were written speculatively. */
export function RunSettings({ run, revisions }: { run: RunRecord; revisions?: readonly RevisionRecord[] }) {
  const { t } = useTranslation();
  const s = run.settings;
  const speculation = describeSpeculation(run, revisions);
  return (
    <details className="run-settings">
      <summary>{t('runSettings.title')}</summary>
      <dl>
        <dt>{t('read.engine')}</dt>
        <dd>
          {run.engineId}
          {typeof run.engineConfig?.model === 'string' ? ` · ${t('runSettings.model', { model: run.engineConfig.model })}` : ''}
        </dd>
        <dt>{t('infmem.method')}</dt>
        <dd>
          {run.method
            ? t('infmem.methodValue', { votes: run.method.earlyStop, thinking: t(run.method.thinking ? 'infmem.thinkingOn' : 'infmem.thinkingOff') })
            : t('infmem.memagent')}
        </dd>
        {speculation && (
          <>
            <dt>{t('runSettings.speculate')}</dt>
            <dd>{speculation}</dd>
          </>
        )}
        <dt>{t('runSettings.chunk')}</dt>
        <dd>
          {t('runSettings.tokens', { n: s.chunkTokens })}
          {s.chunkTokens !== s.requestedChunkTokens ? ` ${t('runSettings.asked', { asked: s.requestedChunkTokens, allowed: s.chunkTokens })}` : ''}
        </dd>
        <dt>{t('runSettings.chunks')}</dt>
        <dd>{CUTTER_LABELS.boundary}</dd>
        <dt>{t('runSettings.memory')}</dt>
        <dd>{t('runSettings.tokens', { n: s.memoryTokens })}</dd>
        <dt>{t('runSettings.context')}</dt>
        <dd>{t('runSettings.tokens', { n: s.contextTokens })}</dd>
        <dt>{t('runSettings.skimTitle')}</dt>
        <dd>{run.skim ? describeSkim(run) : t('runSettings.skimOff')}</dd>
        <dt>{t('runSettings.sampling')}</dt>
        <dd>{t('runSettings.samplingValue', { temperature: s.temperature, topP: s.topP, seed: s.seed ?? t('settings.random') })}</dd>
        <dt>{t('runSettings.prompts')}</dt>
        <dd>
          {run.prompts ? describePrompts(run.prompts) : t('runSettings.oldTemplates')}
          {run.prompts?.note && <p className="hint">{run.prompts.note}</p>}
        </dd>
      </dl>
      <h4>{t('settings.updateTemplate')}</h4>
      <pre tabIndex={0} className="text">
        {run.templates.update}
      </pre>
      <h4>{t('settings.finalTemplate')}</h4>
      <pre tabIndex={0} className="text">
        {run.templates.final}
      </pre>
    </details>
  );
}
