import { useMemo } from 'react';
import { useTranslation } from 'react-i18next';
import { CUTTER_LABELS } from '../../core/token-slices';
import { datasetReport, datasetReportJson, summarizeFiles } from '../../eval/dataset-report';
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
  const compared = useMemo(() => compareMethods(samples.map(sampleRun), [...spec.lengths].sort((a, b) => a - b).map(formatLength)), [spec, samples]);
  const files = useMemo(() => (dataset ? summarizeFiles(dataset.files, items) : []), [dataset, items]);
  const done = dataset ? items.length : samples.length;
  const total = evaluation.total;
  const within = evaluation.status === 'running' && step && step.chunks > 0 ? step.chunk / step.chunks : 0;
  const stem = `memagent-evaluation-${new Date(evaluation.createdAt).toISOString().slice(0, 10)}-${evaluation.id.slice(0, 8)}`;

  const exportJson = () =>
    dataset
      ? download(`${stem}.json`, 'application/json', datasetReportJson(datasetReport(dataset.method, dataset.prompts, files)))
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
            ...(methods.includes('infmem') && { comparison: compared }),
          }),
        );

  return (
    <section className="run" aria-label={t('evaluate.region')}>
      <header className="run-head">
        <h2>
          {engineLabel}
          {evaluation.engineConfig?.model ? ` · ${evaluation.engineConfig.model}` : ''} ·{' '}
          {dataset
            ? t('evaluate.methodOf', { method: dataset.method })
            : methods.includes('infmem')
              ? methods.map((m) => EVAL_METHOD_NAMES[m]).join(' · ')
              : spec.mode === 'memory'
                ? t('evaluate.memoryAgent')
                : t('evaluate.fullShort')}
        </h2>
        {dataset ? (
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
        <DatasetResults files={files} />
      ) : (
        <>
          {methods.includes('infmem') && <MethodsTable rows={compared} />}
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
