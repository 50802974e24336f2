import { useTranslation } from 'react-i18next';
import type { RunRecord } from './data';
import { ProgressBar } from './ProgressBar';
import './questions.css';

/** A run's progress in the list of runs: every run of several questions shows how far it has read. */
export function RunProgress({ run }: { run: RunRecord }) {
  const { t } = useTranslation();
  const counting = run.chunking !== undefined;
  const total = counting ? Math.max(run.chunking!.estimate, run.chunks.length) : run.chunks.length;
  const read = Math.min(run.nextChunk, total);
  return (
    <ProgressBar
      label={t('runs.progress', { question: run.question })}
      value={read}
      max={total}
      text={`${t(counting ? 'run.progressTextAbout' : 'run.progressText', { read, total })}, ${t(`runs.status.${run.status}`)}`}
      className="run-progress"
    />
  );
}
