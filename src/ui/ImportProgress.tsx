import { useTranslation } from 'react-i18next';
import type { ImportState } from './useImport';

/** The book being imported and how far it is; shown where the person added it. */
export function ImportProgress({ progress }: { progress: ImportState['progress'] }) {
  const { t } = useTranslation();
  if (!progress) return null;
  const pct = Math.round(progress.fraction * 100);
  return (
    <div className="import">
      <div
        role="progressbar"
        aria-label={t('import.progress')}
        aria-valuemin={0}
        aria-valuemax={100}
        aria-valuenow={pct}
        aria-valuetext={`${progress.stage}: ${pct}%`}
        className="progress"
      >
        <div className="progress-fill" style={{ width: `${progress.fraction * 100}%` }} />
      </div>
      <p className="hint" aria-live="polite">
        {t('import.importing', { name: progress.name, stage: progress.stage.toLowerCase() })}
      </p>
    </div>
  );
}
