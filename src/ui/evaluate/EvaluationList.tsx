import { useTranslation } from 'react-i18next';
import { EVAL_METHOD_NAMES } from '../../eval/infmem-read';
import { formatLength } from '../../eval/lengths';
import type { EvaluationRecord } from '../data';
import { formatDate } from '../format';
import { i18n } from '../i18n';

interface Props {
  evaluations: readonly EvaluationRecord[];
  currentId: string | null;
  onSelect(id: string): void;
  /** The engine's name as the page shows it. */
  engineLabel(engineId: string): string;
}

/** Tasks named where there are few; a count where the names would not fit. */
const NAMED_TASKS = 3;

/** What tells one sweep from another: the tasks and lengths, or the method and the dataset files. */
function whatItReads(e: EvaluationRecord): string {
  if (e.dataset) {
    const dataset = e.dataset;
    const methods = (e.spec.methods ?? ['memagent']).map((m) => (m === 'memagent' ? dataset.method : EVAL_METHOD_NAMES[m]));
    return `${methods.join(', ')} · ${dataset.files.map((f) => f.name).join(', ')}`;
  }
  const { tasks, lengths, samples } = e.spec;
  const named = tasks.length <= NAMED_TASKS ? tasks.join(', ') : i18n.t('evaluate.tasksTimes', { count: tasks.length });
  return i18n.t('evaluate.listReads', { tasks: named, lengths: lengths.map(formatLength).join(', '), count: samples });
}

/**
 * The evaluations stored here, newest first, each named by its engine and
 * mode, what it reads, its date and its progress as storage holds it.
 */
export function EvaluationList({ evaluations, currentId, onSelect, engineLabel }: Props) {
  const { t } = useTranslation();
  if (evaluations.length === 0) return null;
  return (
    <nav aria-label={t('evaluate.list')} className="run-list">
      <h2>{t('evaluate.list')}</h2>
      <ul>
        {evaluations.map((e) => (
          <li key={e.id}>
            <button type="button" aria-current={e.id === currentId ? 'page' : undefined} onClick={() => onSelect(e.id)}>
              <span className="run-q">
                {engineLabel(e.engineId)}
                {typeof e.engineConfig?.model === 'string' ? ` · ${e.engineConfig.model}` : ''} ·{' '}
                {e.dataset ? t('evaluate.datasetShort') : e.spec.mode === 'memory' ? t('evaluate.memoryShort') : t('evaluate.fullShort')}
              </span>
              <span className="eval-reads">{whatItReads(e)}</span>
              <span className="hint">
                {formatDate(e.createdAt)} · {e.completed}/{e.total} · {t(`runs.status.${e.status}`)}
              </span>
            </button>
          </li>
        ))}
      </ul>
    </nav>
  );
}
