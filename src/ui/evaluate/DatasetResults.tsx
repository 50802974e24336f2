import { useTranslation } from 'react-i18next';
import { pyRound } from '../../core/pytext';
import { type FileResults, paperFigures } from '../../eval/dataset-report';
import { formatNumber } from '../format';

// Metrics are kept at full precision; the table rounds them as the paper prints its figures.
const percent = (x: number | null | undefined) => (x === null || x === undefined ? '—' : `${pyRound(x, 2).toFixed(2)} %`);
const paper = (x: number | null) => (x === null ? '—' : `${x.toFixed(1)} %`);

/**
 * One row per dataset file: the paper's metrics, beside the paper's
 * RL-MemoryAgent figures at that length. Where the evaluation read by more
 * than MemAgent, `method` names the method whose items these are.
 */
export function DatasetResults({ files, method }: { files: readonly FileResults[]; method?: string }) {
  const { t } = useTranslation();
  return (
    <div className="table-wrap">
      <table className="results">
        <caption>{method ? t('results.captionOf', { method }) : t('results.caption')}</caption>
        <thead>
          <tr>
            <th scope="col">{t('results.file')}</th>
            <th scope="col">{t('results.documents')}</th>
            <th scope="col" title={t('results.lengthTitle')}>
              {t('results.length')}
            </th>
            <th scope="col" title={t('results.tokensTitle')}>
              {t('results.tokens')}
            </th>
            <th scope="col">{t('results.samples')}</th>
            <th scope="col" title={t('results.subEmTitle')}>
              sub_em
            </th>
            <th scope="col">em</th>
            <th scope="col">f1</th>
            <th scope="col">{t('results.paper', { model: 'RL-MemoryAgent-7B' })}</th>
            <th scope="col">{t('results.paper', { model: 'RL-MemoryAgent-14B' })}</th>
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
                <td>{s.tokens === null ? '—' : formatNumber(Math.round(s.tokens))}</td>
                <td>
                  {f.finished - f.failed}/{f.planned ?? f.finished}
                  {f.failed > 0 && ` ${t('results.failed', { n: f.failed })}`}
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
