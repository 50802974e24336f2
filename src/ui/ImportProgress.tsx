import { useTranslation } from 'react-i18next';
import type { ImportState } from './useImport';
import { ProgressBar } from './ProgressBar';

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
      <ProgressBar label={t('import.progress')} value={pct} max={100} text={`${stage}: ${pct}%`} fill={progress.fraction} />
      <p className="hint" aria-live="polite">
        {t('import.importing', { name: progress.name, stage: stage.toLowerCase() })}
      </p>
    </div>
  );
}
