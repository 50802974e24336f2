import { useTranslation } from 'react-i18next';
import type { ImportState } from './useImport';

// The stages the worker names, worded in the interface's language; any other is shown as it comes.
const STAGES = {
  'Reading the file': 'readingFile',
  Reading: 'reading',
  'Reading pages': 'readingPages',
  'Reading chapters': 'readingChapters',
  'Counting tokens': 'counting',
  Storing: 'storing',
  Done: 'done',
} as const;

/** The book being imported and how far it is; shown where the person added it. */
export function ImportProgress({ progress }: { progress: ImportState['progress'] }) {
  const { t } = useTranslation();
  if (!progress) return null;
  const pct = Math.round(progress.fraction * 100);
  const known = STAGES[progress.stage as keyof typeof STAGES];
  const stage = known ? t(`import.stage.${known}`) : progress.stage;
  return (
    <div className="import">
      <div
        role="progressbar"
        aria-label={t('import.progress')}
        aria-valuemin={0}
        aria-valuemax={100}
        aria-valuenow={pct}
        aria-valuetext={`${stage}: ${pct}%`}
        className="progress"
      >
        <div className="progress-fill" style={{ width: `${progress.fraction * 100}%` }} />
      </div>
      <p className="hint" aria-live="polite">
        {t('import.importing', { name: progress.name, stage: stage.toLowerCase() })}
      </p>
    </div>
  );
}
