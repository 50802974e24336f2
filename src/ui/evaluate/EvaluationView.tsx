import { useMemo } from 'react';
import { useTranslation } from 'react-i18next';
import { DEFAULT_EARLY_STOP } from '../../core/infmem/planner-state';
import { CUTTER_LABELS } from '../../core/token-slices';
import { datasetComparison, datasetExport, filesByMethod } from '../../eval/dataset-methods';
import { formatLength } from '../../eval/lengths';
import { cellsCsv, reportJson } from '../../eval/report';
import { summarize } from '../../eval/sweep';
import type { DatasetSampleRecord, EvaluationRecord, EvaluationSampleRecord } from '../data';
import { download } from '../download';
import { formatNumber } from '../format';
import { i18n } from '../i18n';
import { AccuracyChart } from './AccuracyChart';
import { DatasetResults } from './DatasetResults';
import { EvaluationDelete } from './EvaluationDelete';
import { ResultsTable } from './ResultsTable';
import { MethodsTable } from './MethodsTable';
import { compareMethods, sampleRun } from '../../eval/compare';
import { EVAL_METHOD_NAMES, type EvalMethod } from '../../eval/infmem-read';
import type { Step } from './useEvaluation';
import { InfmemFacts } from './InfmemFacts';
import { ProgressBar } from '../ProgressBar';
import { JobControls, JobStopAlert } from '../JobControls';

interface Props {
  evaluation: EvaluationRecord;
  samples: readonly EvaluationSampleRecord[];
  /** Items read so far, for an evaluation of dataset files. */
  items: readonly DatasetSampleRecord[];
  step: Step | null;
  engineLabel: string;
  onPause(): unknown;
  onResume(): unknown;
  onCancel(): unknown;
  /** Deletes the evaluation with its samples (offered when it is not running). */
  onDelete(): void;
}

/** A sweep made before InfMem: MemAgent's alone. */
const MEMAGENT_ONLY: readonly EvalMethod[] = ['memagent'];

function haystackName(e: EvaluationRecord): string {
  return e.haystack.kind === 'document' ? e.haystack.name : i18n.t('evaluate.generatedLower');
}

/** One sweep: progress and controls, the results table, the chart and the exports. */
export function EvaluationView({ evaluation, samples, items, step, engineLabel, onPause, onResume, onCancel, onDelete }: Props) {
  const { t } = useTranslation();
  const { spec, dataset } = evaluation;
  const methods = spec.methods ?? MEMAGENT_ONLY;
  // Each method's samples apart: the table and chart show the first method's, the comparison both.
  const cells = useMemo(
    () =>
      summarize(
        spec,
        samples.filter((s) => (s.method ?? 'memagent') === methods[0]),
      ),
    [spec, samples, methods],
  );
  const compared = useMemo(
    () =>
      dataset ? datasetComparison(dataset.files, items) : compareMethods(samples.map(sampleRun), [...spec.lengths].sort((a, b) => a - b).map(formatLength)),
    [dataset, spec, samples, items],
  );
  // A dataset's items by each method apart: a table for each.
  const byMethod = useMemo(() => (dataset ? filesByMethod(methods, dataset.files, items) : []), [dataset, methods, items]);
  const infmem = methods.includes('infmem') ? { earlyStop: spec.earlyStop ?? DEFAULT_EARLY_STOP, thinking: spec.thinking ?? true } : undefined;
  const done = dataset ? items.length : samples.length;
  const total = evaluation.total;
  const within = evaluation.status === 'running' && step && step.chunks > 0 ? step.chunk / step.chunks : 0;
  const stem = `memagent-evaluation-${new Date(evaluation.createdAt).toISOString().slice(0, 10)}-${evaluation.id.slice(0, 8)}`;

  const exportJson = () =>
    dataset
      ? download(
          `${stem}.json`,
          'application/json',
          `${JSON.stringify(
            {
              ...datasetExport({ byMethod, memagentMethod: dataset.method, prompts: dataset.prompts, comparison: compared, ...(infmem && { infmem }) }),
              ...(evaluation.infmemModel && { infmemModel: evaluation.infmemModel }),
            },
            null,
            2,
          )}\n`,
        )
      : download(
          `${stem}.json`,
          'application/json',
          reportJson({
            engine: evaluation.engineId,
            ...(typeof evaluation.engineConfig?.model === 'string' && { model: evaluation.engineConfig.model }),
            haystack: haystackName(evaluation),
            spec,
            cells,
            samples: [...samples],
            ...(infmem && { infmem, comparison: compared }),
            ...(evaluation.infmemModel && { infmemModel: evaluation.infmemModel }),
          }),
        );

  return (
    <section className="run" aria-label={t('evaluate.region')}>
      <header className="run-head">
        <h2>
          {engineLabel}
          {evaluation.engineConfig?.model ? ` · ${evaluation.engineConfig.model}` : ''} ·{' '}
          {dataset
            ? methods.map((m) => (m === 'memagent' ? t('evaluate.methodOf', { method: dataset.method }) : EVAL_METHOD_NAMES[m])).join(' · ')
            : methods.includes('infmem')
              ? methods.map((m) => EVAL_METHOD_NAMES[m]).join(' · ')
              : spec.mode === 'memory'
                ? t('evaluate.memoryAgent')
                : t('evaluate.fullShort')}
        </h2>
        {dataset && !methods.includes('memagent') && (
          <p className="hint">{t('evaluate.datasetFiles', { files: dataset.files.map((f) => f.name).join(', ') })}</p>
        )}
        {dataset ? (
          methods.includes('memagent') && (
            <>
              <p className="hint">
                {t('evaluate.datasetFacts', {
                  files: dataset.files.map((f) => f.name).join(', '),
                  chunk: formatNumber(dataset.settings.chunkTokens),
                  cutter: CUTTER_LABELS[dataset.cutter],
                  memory: formatNumber(dataset.settings.memoryTokens),
                  temperature: dataset.settings.temperature,
                  topP: dataset.settings.topP,
                  prompts: dataset.promptRecord?.label ?? dataset.prompts.set,
                })}
                {dataset.prompts.sha256 ? ` (SHA-256 ${dataset.prompts.sha256.slice(0, 12)}…)` : ''}
              </p>
              {dataset.promptRecord?.note && <p className="hint">{dataset.promptRecord.note}</p>}
            </>
          )
        ) : (
          <p className="hint">
            {t('evaluate.tasksTimes', { count: spec.tasks.length })} × {spec.lengths.map(formatLength).join(', ')} ×{' '}
            {t('evaluate.samplesSeed', { count: spec.samples, seed: spec.seed })}
            {spec.mode === 'memory'
              ? ` · ${t('evaluate.sizes', { chunk: spec.chunkTokens, memory: spec.memoryTokens, cutter: CUTTER_LABELS.boundary })}`
              : ''}{' '}
            · {t('evaluate.haystackOf', { name: haystackName(evaluation) })}
          </p>
        )}
        {infmem && <InfmemFacts evaluation={evaluation} {...infmem} />}
      </header>
      <div className="progress-row">
        <ProgressBar
          label={t('evaluate.progress')}
          value={done}
          max={total}
          text={t('evaluate.samplesOf', { done, total })}
          fill={total ? (done + within) / total : 0}
        />
        <p className="status" aria-live="polite">
          {t(`evaluate.status.${evaluation.status}`)} · {t('evaluate.samplesOf', { done, total })}
          {evaluation.status === 'running' && step ? ` · ${t('evaluate.step', { n: step.ordinal + 1, chunk: step.chunk, chunks: step.chunks })}` : ''}
        </p>
      </div>
      <JobControls status={evaluation.status} onPause={onPause} onResume={onResume} onCancel={onCancel}>
        {evaluation.status !== 'running' && <EvaluationDelete key={evaluation.id} done={done} onDelete={onDelete} />}
      </JobControls>
      <JobStopAlert
        status={evaluation.status}
        error={evaluation.error}
        paused={t('evaluate.pausedBy', { error: evaluation.error })}
        failed={t('evaluate.stopped', { error: evaluation.error, n: done + 1 })}
      />
      {dataset ? (
        <>
          {infmem && <MethodsTable rows={compared} group="file" />}
          {byMethod.map((m) => (
            <DatasetResults key={m.method} files={m.files} {...(infmem && { method: EVAL_METHOD_NAMES[m.method] })} />
          ))}
        </>
      ) : (
        <>
          {infmem && <MethodsTable rows={compared} group="length" />}
          <ResultsTable cells={cells} />
          <AccuracyChart tasks={spec.tasks} lengths={spec.lengths} cells={cells} />
        </>
      )}
      <div className="export">
        {!dataset && (
          <button type="button" onClick={() => download(`${stem}.csv`, 'text/csv', cellsCsv(cells))}>
            {t('evaluate.exportCsv')}
          </button>
        )}
        <button type="button" onClick={exportJson}>
          {t('inspector.exportJson')}
        </button>
      </div>
    </section>
  );
}
