import type { RevisionRecord } from '../storage/db';

interface Props {
  revisions: readonly RevisionRecord[];
  total: number;
  selected: number | null;
  onSelect(index: number): void;
}

/** One entry per memory revision, in reading order. */
export function RevisionList({ revisions, total, selected, onSelect }: Props) {
  return (
    <ol aria-label="Memory revisions" className="revision-list">
      {revisions.map((r, i) => {
        const k = r.index + 1;
        const flags = r.finishReason === 'length' ? ', memory truncated' : '';
        return (
          <li key={r.index} aria-label={`Revision ${k}: chunk ${k} of ${total}, ${r.memoryTokens} memory tokens${flags}`}>
            <button type="button" aria-current={selected === i ? 'true' : undefined} onClick={() => onSelect(i)}>
              <span className="rev-k">Revision {k}</span>
              <span className="rev-meta">
                {r.memoryTokens} tok · {r.ms < 1000 ? `${Math.round(r.ms)} ms` : `${(r.ms / 1000).toFixed(1)} s`}
                {flags && ' · truncated'}
              </span>
            </button>
          </li>
        );
      })}
    </ol>
  );
}
