import { useTranslation } from 'react-i18next';
import { bookName } from '../core/book-set';
import type { DocumentRecord, RunRecord } from './data';

interface Props {
  run: RunRecord;
  /** Each of the run's books as this browser stores it, in reading order; null where it has none. */
  books: readonly (DocumentRecord | null)[];
}

/**
 * The books a run over a set reads, in order, each marked where this browser
 * lacks it (an imported run): its sections show once its file is added again.
 */
export function SetBooks({ run, books }: Props) {
  const { t } = useTranslation();
  if (!run.books) return null;
  // Until the books are read from storage, none is called missing.
  const known = books.length === run.books.length;
  const missing = known ? books.filter((b) => b === null).length : 0;
  return (
    <details className="run-set" open={missing > 0 || run.books.length <= 5}>
      <summary>{t('sets.runBooks')}</summary>
      <ol className="run-books" aria-label={t('sets.runBooks')}>
        {run.books.map((b, i) => {
          const here = !known || books[i] !== null;
          return (
            <li key={`${i}:${b.documentId}`} className={here ? undefined : 'missing'}>
              {bookName(b)}
              {here ? '' : ` — ${t('sets.notHere')}`}
            </li>
          );
        })}
      </ol>
      {missing > 0 && (
        <p className="hint" role="note">
          {t('sets.missing', { count: missing })}
        </p>
      )}
    </details>
  );
}
