import { type ReactNode, useId } from 'react';
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
  /** Searching the runs (RunSearch), under Import run. */
  search?: ReactNode;
}

/** Runs grouped by read: the questions of one read together (in the order asked), each other run alone; newest first. */
function readsOf(runs: readonly RunRecord[]): RunRecord[][] {
  const reads: RunRecord[][] = [];
  const byRead = new Map<string, RunRecord[]>();
  for (const r of runs) {
    const read = r.readId ? byRead.get(r.readId) : undefined;
    if (read) read.push(r);
    else {
      reads.push([r]);
      if (r.readId) byRead.set(r.readId, reads.at(-1)!);
    }
  }
  return reads;
}

function RunItem({ run: r, current, onOpen }: { run: RunRecord; current: string | null; onOpen(id: string): void }) {
  const { t } = useTranslation();
  return (
    <li>
      <button type="button" aria-current={r.id === current ? 'page' : undefined} onClick={() => onOpen(r.id)}>
        <span className="run-q">{r.question}</span>
        <span className="hint">
          {formatRunBooks(r)} · {t(`runs.status.${r.status}`)}
        </span>
        <span className="hint">{[runMade(r), ...runChanges(r)].join(' · ')}</span>
      </button>
      <RunProgress run={r} />
    </li>
  );
}

/** The questions of one read as one entry: what it read and how many questions, on screen, then each question. */
function ReadItem({ read, current, onOpen }: { read: readonly RunRecord[]; current: string | null; onOpen(id: string): void }) {
  const { t } = useTranslation();
  const head = useId();
  return (
    <li className="run-read-item">
      <span id={head} className="run-read-head">
        {t('runs.read', { count: read.length, book: formatRunBooks(read[0]!) })}
      </span>
      <ul role="group" aria-labelledby={head} className="run-read">
        {read.map((r) => (
          <RunItem key={r.id} run={r} current={current} onOpen={onOpen} />
        ))}
      </ul>
    </li>
  );
}

/** Earlier and unfinished runs, newest first. */
export function RunList({ runs, current, onOpen, onImport, search }: Props) {
  const { t } = useTranslation();
  return (
    <nav aria-label={t('runs.title')} className="run-list">
      <h2>{t('runs.title')}</h2>
      <div className="field">
        <FilePicker label={t('runs.import')} accept=".json,application/json" onFiles={(files) => onImport(files[0]!)}>
          {t('runs.import')}
        </FilePicker>
      </div>
      {search}
      <ul>
        {readsOf(runs).map((read) =>
          read.length === 1 ? (
            <RunItem key={read[0]!.id} run={read[0]!} current={current} onOpen={onOpen} />
          ) : (
            <ReadItem key={read[0]!.readId} read={read} current={current} onOpen={onOpen} />
          ),
        )}
      </ul>
    </nav>
  );
}
