import { useTranslation } from 'react-i18next';
import type { RunRecord } from './data';
import { FilePicker } from './FilePicker';
import { formatRunBooks } from './format';
import { RunProgress } from './RunProgress';
import { runChanges, runMade } from './run-summary';

interface Props {
  runs: readonly RunRecord[];
  current: string | null;
  onOpen(id: string): void;
  onImport(file: File): void;
}

/** Earlier and unfinished runs, newest first. */
export function RunList({ runs, current, onOpen, onImport }: Props) {
  const { t } = useTranslation();
  return (
    <nav aria-label={t('runs.title')} className="run-list">
      <h2>{t('runs.title')}</h2>
      <div className="field">
        <FilePicker label={t('runs.import')} accept=".json,application/json" onFiles={(files) => onImport(files[0]!)}>
          {t('runs.import')}
        </FilePicker>
      </div>
      <ul>
        {runs.map((r) => (
          <li key={r.id}>
            <button type="button" aria-current={r.id === current ? 'page' : undefined} onClick={() => onOpen(r.id)}>
              <span className="run-q">{r.question}</span>
              <span className="hint">
                {formatRunBooks(r)} · {t(`runs.status.${r.status}`)}
              </span>
              <span className="hint">{[runMade(r), ...runChanges(r)].join(' · ')}</span>
            </button>
            <RunProgress run={r} />
          </li>
        ))}
      </ul>
    </nav>
  );
}
