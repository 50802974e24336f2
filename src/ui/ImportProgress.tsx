import type { ImportState } from './useImport';

/** The book being imported and how far it is; shown where the person added it. */
export function ImportProgress({ progress }: { progress: ImportState['progress'] }) {
  if (!progress) return null;
  const pct = Math.round(progress.fraction * 100);
  return (
    <div className="import">
      <div
        role="progressbar"
        aria-label="Import progress"
        aria-valuemin={0}
        aria-valuemax={100}
        aria-valuenow={pct}
        aria-valuetext={`${progress.stage}: ${pct}%`}
        className="progress"
      >
        <div className="progress-fill" style={{ width: `${progress.fraction * 100}%` }} />
      </div>
      <p className="hint" aria-live="polite">
        Importing {progress.name}: {progress.stage.toLowerCase()}…
      </p>
    </div>
  );
}
