import { type ReactNode, useId, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { holdsWords } from '../core/fold';
import { type RunRecord, store } from './data';
import { formatDate, formatRunBooks } from './format';
import { runMade } from './run-summary';

/** A run as the search reads it: its question, books, date (as shown, and as 2026-12-07) and engine. */
function searchable(run: RunRecord): string {
  const d = new Date(run.createdAt);
  const iso = `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, '0')}-${String(d.getDate()).padStart(2, '0')}`;
  return [run.question, formatRunBooks(run), formatDate(run.createdAt), iso, runMade(run)].join(' \n ');
}

/** The run an export holds, where this browser has it already: what an import that was refused as "already here" refers to. */
export async function runAlreadyHere(json: string): Promise<RunRecord | undefined> {
  let id: unknown;
  try {
    id = (JSON.parse(json) as { run?: { id?: unknown } }).run?.id;
  } catch {
    return undefined;
  }
  return typeof id === 'string' ? (await store).getRun(id) : undefined;
}

interface Props {
  runs: readonly RunRecord[];
  /** A run an import found already here: named with a link to it. */
  found: RunRecord | null;
  onOpen(id: string): void;
  /** The list of runs, given the runs the search keeps and the search box to show with it. */
  children(shown: readonly RunRecord[], search: ReactNode): ReactNode;
}

/** "Search runs": the Library's runs narrowed by question, book or date (every word, case and accents folded). */
export function RunSearch({ runs, found, onOpen, children }: Props) {
  const { t } = useTranslation();
  const id = useId();
  const [query, setQuery] = useState('');
  const q = query.trim();
  const shown = q ? runs.filter((r) => holdsWords(searchable(r), q)) : runs;
  const search = (
    <>
      {runs.length > 0 && (
        <div className="field">
          <label htmlFor={id}>{t('runSearch.label')}</label>
          <input id={id} type="search" value={query} placeholder={t('runSearch.placeholder')} onChange={(e) => setQuery(e.target.value)} />
          <p className="hint" role="status">
            {!q ? '' : shown.length ? t('runSearch.matches', { shown: shown.length, count: runs.length }) : t('runSearch.none', { query: q })}
          </p>
        </div>
      )}
      {found && (
        <p className="notice" role="status">
          {t('runSearch.alreadyHere')}{' '}
          <button type="button" className="link" onClick={() => onOpen(found.id)}>
            {t('runSearch.openIt', { question: found.question })}
          </button>
        </p>
      )}
    </>
  );
  return <>{children(shown, search)}</>;
}
