import type { RunRecord } from '../storage/db';

interface Props {
  runs: readonly RunRecord[];
  current: string | null;
  onOpen(id: string): void;
}

/** Earlier and unfinished runs, newest first. */
export function RunList({ runs, current, onOpen }: Props) {
  if (runs.length === 0) return null;
  return (
    <nav aria-label="Runs" className="run-list">
      <h2>Runs</h2>
      <ul>
        {runs.map((r) => (
          <li key={r.id}>
            <button type="button" aria-current={r.id === current ? 'page' : undefined} onClick={() => onOpen(r.id)}>
              <span className="run-q">{r.question}</span>
              <span className="hint">
                {r.documentName} · {r.status}
              </span>
            </button>
          </li>
        ))}
      </ul>
    </nav>
  );
}
