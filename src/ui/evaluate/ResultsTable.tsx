import { formatLength } from '../../eval/lengths';
import { formatMs, formatPercent, formatRate } from '../../eval/report';
import type { CellSummary } from '../../eval/sweep';

/** The results, one row per task × length, as the paper's table reads them. */
export function ResultsTable({ cells }: { cells: readonly CellSummary[] }) {
  const qa = cells.some((c) => c.exactMatch !== null);
  const percent = (x: number | null) => (x === null ? '—' : `${formatPercent(x)} %`);
  return (
    <div className="table-wrap" tabIndex={0}>
      <table className="results">
        <caption>Results</caption>
        <thead>
          <tr>
            <th scope="col">Task</th>
            <th scope="col">Length</th>
            <th scope="col">Samples</th>
            <th scope="col">Accuracy</th>
            {qa && <th scope="col">Exact match</th>}
            {qa && <th scope="col">F1</th>}
            <th scope="col">Mean time per chunk</th>
            <th scope="col" title="Prompt and reply tokens processed per second of generation">
              Tokens/s
            </th>
          </tr>
        </thead>
        <tbody>
          {cells.map((c) => (
            <tr key={`${c.task}/${c.length}`}>
              <th scope="row">{c.task}</th>
              <td>{formatLength(c.length)}</td>
              <td>
                {c.finished}/{c.planned}
                {c.skipped > 0 && ` (${c.skipped} too long)`}
              </td>
              <td>{percent(c.accuracy)}</td>
              {qa && <td>{percent(c.exactMatch)}</td>}
              {qa && <td>{percent(c.f1)}</td>}
              <td>{c.meanChunkMs === null ? '—' : `${formatMs(c.meanChunkMs)} ms`}</td>
              <td>{formatRate(c.tokensPerSecond)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
