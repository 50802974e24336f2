import { useEffect, useId, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { chunkAtPlace, type ReadSpan } from '../../core/line-up';
import { type RunRecord, store } from '../data';
import { formatRunBooks } from '../format';
import { runMade } from '../run-summary';

interface Props {
  run: RunRecord;
  others: readonly RunRecord[];
  /** Chunk index selected in the run being inspected. */
  index: number | null;
  /** The characters that chunk read: the other run is shown where it read the same place. */
  at: ReadSpan | undefined;
}

/** What a run reads: its book, or its set's books in order. Runs that read the same can be compared place by place. */
function readsOf(run: RunRecord): string {
  return run.books ? run.books.map((b) => b.documentId).join('|') : run.documentId;
}

/** The other run's memory after its chunk that read where this run's chunk starts; null where it read no such chunk. */
interface Loaded {
  runId: string;
  start: number;
  chunk: number | null;
  memory: string | null;
}

/**
 * Another run over the same book (or the same set of books, in the same order), its memory at the same place in
 * the book beside this one's: the chunk that reads where this one starts, whatever either's chunk size.
 */
export function Compare({ run, others, index, at }: Props) {
  const { t } = useTranslation();
  const id = useId();
  const candidates = others.filter((o) => o.id !== run.id && readsOf(o) === readsOf(run));
  const [otherId, setOtherId] = useState('');
  const [loaded, setLoaded] = useState<Loaded | null>(null);
  const other = candidates.find((o) => o.id === otherId);
  const otherRunId = other?.id;
  // Read again as the other run moves on (it may reach the place later), keeping the text shown meanwhile.
  const otherUpdated = other?.updatedAt;
  const start = at?.start;

  useEffect(() => {
    if (!otherRunId || start === undefined) return;
    let alive = true;
    void (async () => {
      const db = await store;
      const revisions = [...(await db.listRevisions(otherRunId))].sort((a, b) => a.start - b.start);
      const found = revisions[chunkAtPlace(revisions, start)];
      const memory = found ? await db.getMemory(otherRunId, found.index) : undefined;
      if (alive) setLoaded({ runId: otherRunId, start, chunk: found ? found.index : null, memory: memory ?? null });
    })();
    return () => {
      alive = false;
    };
  }, [otherRunId, start, otherUpdated]);
  // Only what was read for the run and place chosen now, never for an earlier choice.
  const shown = loaded && loaded.runId === otherRunId && loaded.start === start ? loaded : null;

  if (candidates.length === 0) return null;
  // Each choice names what tells the runs apart: when, with what, over which books, in what sizes.
  const labels = candidates.map((o) =>
    [o.question, runMade(o), formatRunBooks(o), t('compare.sizes', { chunk: o.settings.chunkTokens, memory: o.settings.memoryTokens })].join(' · '),
  );
  return (
    <div className="compare">
      <div className="field inline">
        <label htmlFor={id}>{t('compare.with')}</label>
        <select id={id} value={otherId} onChange={(e) => setOtherId(e.target.value)}>
          <option value="">{t('compare.none', { count: candidates.length })}</option>
          {candidates.map((o, i) => (
            <option key={o.id} value={o.id}>
              {/* Runs alike in all of that (started the same minute) are numbered. */}
              {labels.indexOf(labels[i]!) === i ? labels[i] : `${labels[i]} (${labels.slice(0, i + 1).filter((l) => l === labels[i]).length})`}
            </option>
          ))}
        </select>
      </div>
      {other && (
        <section aria-label={t('compare.region')} className="pane">
          <h3>
            {other.question} · {t('compare.heading', { memory: other.settings.memoryTokens, chunk: shown && shown.chunk !== null ? shown.chunk + 1 : '–' })}
          </h3>
          {other.settings.chunkTokens !== run.settings.chunkTokens && shown && shown.chunk !== null && index !== null && (
            <p className="hint">{t('compare.differ', { chunk: shown.chunk + 1, own: index + 1 })}</p>
          )}
          <pre tabIndex={0} className="text">
            {shown?.memory ?? t('compare.noRevision')}
          </pre>
        </section>
      )}
    </div>
  );
}
