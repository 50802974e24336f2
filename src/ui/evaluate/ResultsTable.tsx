import { useTranslation } from 'react-i18next';
import { formatLength } from '../../eval/lengths';
import { formatMs, formatPercent, formatRate } from '../../eval/report';
import type { CellSummary } from '../../eval/sweep';

/** The results, one row per task × length, as the paper's table reads them. */
export function ResultsTable({ cells }: { cells: readonly CellSummary[] }) {
  const { t } = useTranslation();
  const qa = cells.some((c) => c.exactMatch !== null);
  const percent = (x: number | null) => (x === null ? '—' : `${formatPercent(x)} %`);
  return (
    <div className="table-wrap" tabIndex={0}>
      <table className="results">
        <caption>{t('results.caption')}</caption>
        <thead>
          <tr>
            <th scope="col">{t('results.task')}</th>
            <th scope="col">{t('results.length')}</th>
            <th scope="col">{t('results.samples')}</th>
            <th scope="col">{t('results.accuracy')}</th>
            {qa && <th scope="col">{t('results.exact')}</th>}
            {qa && <th scope="col">F1</th>}
            <th scope="col">{t('results.meanTime')}</th>
            <th scope="col" title={t('results.rateTitle')}>
              {t('results.rate')}
            </th>
          </tr>
        </thead>
        <tbody>
          {cells.map((c) => (
            <tr key={`${c.task}/${c.length}`}>
              <th scope="row">
                {t(`tasks.${c.task}.name`)} <span className="task-id">{c.task}</span>
              </th>
              <td>{formatLength(c.length)}</td>
              <td>
                {c.finished}/{c.planned}
                {c.skipped > 0 && ` ${t('results.tooLong', { n: c.skipped })}`}
                {c.failed > 0 && ` ${t('results.failed', { n: c.failed })}`}
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
