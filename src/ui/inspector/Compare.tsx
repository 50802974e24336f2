import { useEffect, useId, useState } from 'react';
import type { RunRecord } from '../../storage/db';
import { store } from '../client';

interface Props {
  run: RunRecord;
  others: readonly RunRecord[];
  /** Chunk index selected in the run being inspected. */
  index: number | null;
}

/** Another run over the same book, its memory at the same chunk beside this one's. */
export function Compare({ run, others, index }: Props) {
  const id = useId();
  const candidates = others.filter((o) => o.id !== run.id && o.documentId === run.documentId);
  const [otherId, setOtherId] = useState('');
  const [memory, setMemory] = useState<string | null>(null);
  const other = candidates.find((o) => o.id === otherId);

  useEffect(() => {
    setMemory(null);
    if (!other || index === null) return;
    let alive = true;
    void (async () => {
      const m = await (await store).getMemory(other.id, index);
      if (alive) setMemory(m ?? null);
    })();
    return () => {
      alive = false;
    };
  }, [other, index]);

  if (candidates.length === 0) return null;
  return (
    <div className="compare">
      <div className="field inline">
        <label htmlFor={id}>Compare with</label>
        <select id={id} value={otherId} onChange={(e) => setOtherId(e.target.value)}>
          <option value="">No other run</option>
          {candidates.map((o) => (
            <option key={o.id} value={o.id}>
              {o.question} · {o.engineId} · chunk {o.settings.chunkTokens} / memory {o.settings.memoryTokens}
            </option>
          ))}
        </select>
      </div>
      {other && (
        <section aria-label="Comparison" className="pane">
          <h3>
            {other.question} · memory {other.settings.memoryTokens} tokens — memory after chunk {index === null ? '–' : index + 1}
          </h3>
          {other.settings.chunkTokens !== run.settings.chunkTokens && (
            <p className="hint">The runs use different chunk sizes, so the same chunk number covers different text.</p>
          )}
          <pre tabIndex={0} className="text">{memory ?? 'That run has no revision at this chunk.'}</pre>
        </section>
      )}
    </div>
  );
}
