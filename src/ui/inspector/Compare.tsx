import { useEffect, useId, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { type RunRecord, store } from '../data';

interface Props {
  run: RunRecord;
  others: readonly RunRecord[];
  /** Chunk index selected in the run being inspected. */
  index: number | null;
}

/** What a run reads: its book, or its set's books in order. Runs that read the same can be compared chunk by chunk. */
function readsOf(run: RunRecord): string {
  return run.books ? run.books.map((b) => b.documentId).join('|') : run.documentId;
}

/** Another run over the same book (or the same set of books, in the same order), its memory at the same chunk beside this one's. */
export function Compare({ run, others, index }: Props) {
  const { t } = useTranslation();
  const id = useId();
  const candidates = others.filter((o) => o.id !== run.id && readsOf(o) === readsOf(run));
  const [otherId, setOtherId] = useState('');
  const [loaded, setLoaded] = useState<{ runId: string; index: number; memory: string | null } | null>(null);
  const other = candidates.find((o) => o.id === otherId);
  const otherRunId = other?.id;
  // Read again as the other run moves on (it may reach the chunk later), keeping the text shown meanwhile.
  const otherUpdated = other?.updatedAt;

  useEffect(() => {
    if (!otherRunId || index === null) return;
    let alive = true;
    void (async () => {
      const m = await (await store).getMemory(otherRunId, index);
      if (alive) setLoaded({ runId: otherRunId, index, memory: m ?? null });
    })();
    return () => {
      alive = false;
    };
  }, [otherRunId, index, otherUpdated]);
  // Only the memory of the run and chunk chosen now, never one read for an earlier choice.
  const memory = loaded && loaded.runId === otherRunId && loaded.index === index ? loaded.memory : null;

  if (candidates.length === 0) return null;
  return (
    <div className="compare">
      <div className="field inline">
        <label htmlFor={id}>{t('compare.with')}</label>
        <select id={id} value={otherId} onChange={(e) => setOtherId(e.target.value)}>
          <option value="">{t('compare.none')}</option>
          {candidates.map((o) => (
            <option key={o.id} value={o.id}>
              {o.question} · {o.engineId} · {t('compare.sizes', { chunk: o.settings.chunkTokens, memory: o.settings.memoryTokens })}
            </option>
          ))}
        </select>
      </div>
      {other && (
        <section aria-label={t('compare.region')} className="pane">
          <h3>
            {other.question} · {t('compare.heading', { memory: other.settings.memoryTokens, chunk: index === null ? '–' : index + 1 })}
          </h3>
          {other.settings.chunkTokens !== run.settings.chunkTokens && <p className="hint">{t('compare.differ')}</p>}
          <pre tabIndex={0} className="text">
            {memory ?? t('compare.noRevision')}
          </pre>
        </section>
      )}
    </div>
  );
}
