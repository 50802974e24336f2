import { type FileResults, paperFigures } from '../../eval/dataset-report';

const percent = (x: number | null | undefined) => (x === null || x === undefined ? '—' : `${x.toFixed(2)} %`);
const paper = (x: number | null) => (x === null ? '—' : `${x.toFixed(1)} %`);

/** One row per dataset file: the paper's metrics, beside the paper's RL-MemoryAgent figures at that length. */
export function DatasetResults({ files }: { files: readonly FileResults[] }) {
  return (
    <div className="table-wrap">
      <table className="results">
        <caption>Results</caption>
        <thead>
          <tr>
            <th scope="col">File</th>
            <th scope="col">Documents</th>
            <th scope="col" title="The paper's length for this many documents">
              Length
            </th>
            <th scope="col" title="Mean tokens of the contexts read">
              Tokens
            </th>
            <th scope="col">Samples</th>
            <th scope="col" title="Substring match both ways: the paper's headline metric">
              sub_em
            </th>
            <th scope="col">em</th>
            <th scope="col">f1</th>
            <th scope="col">Paper, RL-MemoryAgent-7B</th>
            <th scope="col">Paper, RL-MemoryAgent-14B</th>
          </tr>
        </thead>
        <tbody>
          {files.map((f) => {
            const s = f.summary;
            const figures = paperFigures(s.num_docs);
            return (
              <tr key={s.file}>
                <th scope="row">{s.file}</th>
                <td>{s.num_docs ?? '—'}</td>
                <td>{figures.length ?? '—'}</td>
                <td>{s.tokens === null ? '—' : s.tokens.toLocaleString('en')}</td>
                <td>
                  {f.finished - f.failed}/{f.planned ?? f.finished}
                  {f.failed > 0 && ` (${f.failed} failed, left out)`}
                </td>
                <td>{percent(s.metrics?.sub_em)}</td>
                <td>{percent(s.metrics?.em)}</td>
                <td>{percent(s.metrics?.f1)}</td>
                <td>{paper(figures.rl7b)}</td>
                <td>{paper(figures.rl14b)}</td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}
