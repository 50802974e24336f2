import { useMemo } from 'react';
import { CUTTER_LABELS } from '../../core/token-slices';
import { datasetReport, datasetReportJson, summarizeFiles } from '../../eval/dataset-report';
import { formatLength } from '../../eval/lengths';
import { cellsCsv, reportJson } from '../../eval/report';
import { summarize } from '../../eval/sweep';
import type { DatasetSampleRecord, EvaluationRecord, EvaluationSampleRecord } from '../../storage/db';
import { download } from '../download';
import { AccuracyChart } from './AccuracyChart';
import { DatasetResults } from './DatasetResults';
import { ResultsTable } from './ResultsTable';
import type { Step } from './useEvaluation';

interface Props {
  evaluation: EvaluationRecord;
  samples: readonly EvaluationSampleRecord[];
  /** Items read so far, for an evaluation of dataset files. */
  items: readonly DatasetSampleRecord[];
  step: Step | null;
  engineLabel: string;
  onPause(): void;
  onResume(): void;
  onCancel(): void;
}

const STATUS_TEXT: Record<EvaluationRecord['status'], string> = {
  running: 'Running',
  paused: 'Paused',
  cancelled: 'Cancelled',
  done: 'Done',
  failed: 'Stopped by an error',
};

function haystackName(e: EvaluationRecord): string {
  return e.haystack.kind === 'document' ? e.haystack.name : 'generated essay';
}

/** One sweep: progress and controls, the results table, the chart and the exports. */
export function EvaluationView({ evaluation, samples, items, step, engineLabel, onPause, onResume, onCancel }: Props) {
  const { spec, dataset } = evaluation;
  const cells = useMemo(() => summarize(spec, samples), [spec, samples]);
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
      }),
    );

  return (
    <section className="run" aria-label="Evaluation">
      <header className="run-head">
        <h2>
          {engineLabel}
          {evaluation.engineConfig?.model ? ` · ${evaluation.engineConfig.model}` : ''} ·{' '}
          {dataset ? `method ${dataset.method}` : spec.mode === 'memory' ? 'memory agent' : 'full context'}
        </h2>
        {dataset ? (
          <>
            <p className="hint">
              RULER-HotpotQA: {dataset.files.map((f) => f.name).join(', ')} · chunks of {dataset.settings.chunkTokens.toLocaleString('en')} tokens,{' '}
              {CUTTER_LABELS[dataset.cutter]} · up to {dataset.settings.memoryTokens.toLocaleString('en')} tokens per reply · temperature{' '}
              {dataset.settings.temperature}, top p {dataset.settings.topP} · prompts: {dataset.promptRecord?.label ?? dataset.prompts.set}
              {dataset.prompts.sha256 ? ` (SHA-256 ${dataset.prompts.sha256.slice(0, 12)}…)` : ''}
            </p>
            {dataset.promptRecord?.note && <p className="hint">{dataset.promptRecord.note}</p>}
          </>
        ) : (
          <p className="hint">
            {spec.tasks.length} task{spec.tasks.length === 1 ? '' : 's'} × {spec.lengths.map(formatLength).join(', ')} ×{' '}
            {spec.samples} sample{spec.samples === 1 ? '' : 's'} · seed {spec.seed}
            {spec.mode === 'memory' ? ` · chunk ${spec.chunkTokens}, memory ${spec.memoryTokens} tokens, ${CUTTER_LABELS.boundary}` : ''} · essay
            haystack: {haystackName(evaluation)}
          </p>
        )}
      </header>
      <div className="progress-row">
        <div
          role="progressbar"
          aria-label="Evaluation progress"
          aria-valuemin={0}
          aria-valuemax={total}
          aria-valuenow={done}
          aria-valuetext={`${done} of ${total} samples`}
          className="progress"
        >
          <div className="progress-fill" style={{ width: `${total ? (100 * (done + within)) / total : 0}%` }} />
        </div>
        <p className="status" aria-live="polite">
          {STATUS_TEXT[evaluation.status]} · {done} of {total} samples
          {evaluation.status === 'running' && step ? ` · sample ${step.ordinal + 1}: chunk ${step.chunk} of ${step.chunks}` : ''}
        </p>
      </div>
      <div className="controls">
        {evaluation.status === 'running' && (
          <button type="button" onClick={onPause}>
            Pause
          </button>
        )}
        {(evaluation.status === 'paused' || evaluation.status === 'cancelled' || evaluation.status === 'failed') && (
          <button type="button" onClick={onResume}>
            Resume
          </button>
        )}
        {(evaluation.status === 'running' || evaluation.status === 'paused') && (
          <button type="button" onClick={onCancel}>
            Cancel
          </button>
        )}
      </div>
      {evaluation.status === 'failed' && (
        <p role="alert" className="error">
          The evaluation stopped: {evaluation.error} Fix the cause, then press Resume to continue from sample {done + 1}.
        </p>
      )}
      {dataset ? (
        <DatasetResults files={files} />
      ) : (
        <>
          <ResultsTable cells={cells} />
          <AccuracyChart tasks={spec.tasks} lengths={spec.lengths} cells={cells} />
        </>
      )}
      <div className="export">
        {!dataset && (
          <button type="button" onClick={() => download(`${stem}.csv`, 'text/csv', cellsCsv(cells))}>
            Export CSV
          </button>
        )}
        <button type="button" onClick={exportJson}>
          Export JSON
        </button>
      </div>
    </section>
  );
}
