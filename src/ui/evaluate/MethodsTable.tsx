import { useTranslation } from 'react-i18next';
import type { ComparisonRow } from '../../eval/compare';
import { EVAL_METHOD_NAMES } from '../../eval/infmem-read';
import { formatPercent } from '../../eval/report';
import { formatNumber } from '../format';

/** The methods side by side on the same samples: accuracy, chunks read, requests, tokens and time, per length (or dataset file). */
export function MethodsTable({ rows, group }: { rows: readonly ComparisonRow[]; group: 'length' | 'file' }) {
  const { t } = useTranslation();
  return (
    <div className="table-wrap" tabIndex={0}>
      <table className="results">
        <caption>{t('methods.caption')}</caption>
        <thead>
          <tr>
            <th scope="col">{t('methods.method')}</th>
            <th scope="col">{t(group === 'file' ? 'results.file' : 'results.length')}</th>
            <th scope="col">{t('results.samples')}</th>
            <th scope="col">{t('results.accuracy')}</th>
            <th scope="col">{t('methods.chunksRead')}</th>
            <th scope="col" title={t('methods.requestsTitle')}>
              {t('methods.requests')}
            </th>
            <th scope="col">{t('methods.tokens')}</th>
            <th scope="col">{t('methods.time')}</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((r) => (
            <tr key={`${r.method}/${r.group}`}>
              <th scope="row">{EVAL_METHOD_NAMES[r.method]}</th>
              <td>{r.group}</td>
              <td>{r.scored}</td>
              <td>{r.accuracy === null ? '—' : `${formatPercent(r.accuracy)} %`}</td>
              <td>
                {formatNumber(r.chunksRead)}/{formatNumber(r.chunks)}
                {r.chunks > 0 && ` (${formatPercent(r.chunksRead / r.chunks)} %)`}
              </td>
              <td>{formatNumber(r.requests)}</td>
              <td>{formatNumber(r.tokens)}</td>
              <td>{t('methods.seconds', { n: formatNumber(r.ms / 1000, 1) })}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
