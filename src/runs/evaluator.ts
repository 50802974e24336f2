import { BudgetError } from '../core/budget';
import { planRead, readSettingsProblem } from '../core/plan';
import { withoutSecrets } from '../engines/engine';
import { generatedEssay } from '../eval/essay';
import { Haystack } from '../eval/haystack';
import { MAX_LENGTH, MIN_LENGTH } from '../eval/lengths';
import { planSweep, QUESTION_TOKENS_BOUND, runSweep, type SampleResult, sweepSpec, sweepStepTokens } from '../eval/sweep';
import { type EvaluationInfmemDeps, infmemModelFor, infmemSpec, infmemStepsOf, methodsOf, readInfmemSamples, type SweepRead } from './evaluator-infmem';
import { planDataset, readDataset } from './evaluator-dataset';
import { heedingStops } from './heeding-stops';
import { isTaskId, type TaskId } from '../eval/tasks';
import { type DatasetSampleRecord, type EvaluationHaystack, type EvaluationRecord, type EvaluationSampleRecord, type Store } from '../storage/db';
import type { EvaluationEvent } from '../agent/events';
import type { EngineCache } from '../jobs/engines';
import { type JobContext, JobHost, type JobHostDeps } from '../jobs/host';
import { RequestError } from '../jobs/request-error';
import { refuseInfmemOnly } from './plan';
import type { PromptLibrary } from './prompt-files';
import type { EvaluationRequest } from '../agent/protocol';
import { sampleGroup, stopsEverySample, togetherOf } from '../engines/sample-groups';

/** The part of the Store an evaluation uses (an in-memory one serves in tests). */
export type EvaluationStore = Pick<
  Store,
  | 'createEvaluation'
  | 'getEvaluation'
  | 'updateEvaluation'
  | 'setEvaluationStatus'
  | 'commitEvaluationSample'
  | 'listEvaluationOrdinals'
  | 'getDocument'
  | 'getText'
  | 'putDatasetItems'
  | 'getDatasetItem'
  | 'deleteDatasetItems'
  | 'deleteEvaluation'
>;

export interface EvaluatorDeps extends EvaluationInfmemDeps {
  store: EvaluationStore;
  engines: EngineCache;
  publish(event: EvaluationEvent): void;
  /** Runs `work` holding the sweep's lock, waiting for it if another tab holds it. */
  withLock?: JobHostDeps['withLock'];
  newId?(): string;
  /** Least time between two progress events inside a sample. */
  stepIntervalMs?: number;
  /** The MemAgent prompt files; without it dataset evaluations use this app's wording or edited templates. */
  prompts?: Pick<PromptLibrary, 'resolve'>;
  /** InfMem's pinned files, for InfMem read with a model (the extractive engine needs none). */
  infmemFiles?: EvaluationInfmemDeps['infmemFiles'];
}

/**
 * Owns evaluation sweeps in the worker: starts, resumes, pauses and cancels
 * them, and stores each finished sample with the sweep's progress in one
 * transaction, so that a reload resumes from the next unfinished sample.
 */
export class Evaluator {
  /** Each sweep's life: start, pause, resume, cancel (see JobHost). */
  readonly jobs: JobHost;
  private readonly haystacks = new Map<string, Haystack>();

  constructor(private readonly deps: EvaluatorDeps) {
    const { store, publish } = deps;
    this.jobs = new JobHost(
      {
        lockName: (id) => `memagent-evaluation-${id}`,
        status: async (id) => (await store.getEvaluation(id))?.status,
        setStatus: (id, status, error) => store.setEvaluationStatus(id, status, error),
        announce: (evaluationId, status, error) => publish({ type: 'status', evaluationId, status, ...(error !== undefined && { error }) }),
        control: (evaluationId, action) => publish({ type: 'control', evaluationId, action }),
        read: (id, job) => this.read(id, job),
        words: { noun: 'evaluation', continuesFrom: 'its next unfinished sample' },
      },
      deps,
    );
  }

  /** `onRead` hears how many bytes of the dataset files are read and stored so far, of how many. */
  async start(request: EvaluationRequest, onRead?: (bytes: number, total: number) => void): Promise<string> {
    // A Qwen3 model reads the InfMem way: only MemAgent's reads of it are refused.
    if (methodsOf(request).includes('memagent')) refuseInfmemOnly(request);
    if (request.dataset) {
      const { sweep, engineConfig } = await planDataset(this.deps, request, onRead);
      return this.create(sweep, engineConfig);
    }
    const { store } = this.deps;
    const { tasks, lengths } = sweepCells(request);
    let haystack: EvaluationHaystack = { kind: 'generated' };
    if (request.documentId) {
      const doc = await store.getDocument(request.documentId);
      if (!doc) throw new RequestError('That document is no longer stored. Add the file again.');
      haystack = { kind: 'document', documentId: doc.id, name: doc.name };
    }
    const wrong = readSettingsProblem({ chunkTokens: request.chunkTokens, memoryTokens: request.memoryTokens });
    if (wrong) throw new RequestError(wrong.message);
    const methods = methodsOf(request);
    const spec = sweepSpec({
      ...infmemSpec(request, methods),
      tasks,
      lengths,
      samples: request.samples,
      mode: request.mode,
      ...(request.seed !== undefined && { seed: request.seed }),
      ...(request.chunkTokens !== undefined && { chunkTokens: request.chunkTokens }),
      ...(request.memoryTokens !== undefined && { memoryTokens: request.memoryTokens }),
    });
    const engineConfig = withoutSecrets(request.engineConfig);
    const engine = await this.deps.engines.open(request.engineId, engineConfig);
    if (spec.mode === 'memory' && methods.includes('memagent')) {
      // A budget that cannot work fails here, not at the first sample (InfMem's sizes are its own).
      try {
        planRead(spec, {
          contextWindow: engine.contextWindow,
          count: (s) => engine.tokenizer.count(s),
          updateTemplate: spec.templates.update,
          questionTokens: QUESTION_TOKENS_BOUND,
        });
      } catch (e) {
        if (e instanceof BudgetError) throw new RequestError(e.message);
        throw e;
      }
    }
    const infmemModel = methods.includes('infmem') ? await infmemModelFor(this.deps, engine, request) : undefined;
    const id = this.deps.newId?.() ?? crypto.randomUUID();
    return this.create(
      { id, engineId: request.engineId, haystack, spec, total: planSweep(spec).length * methods.length, ...(infmemModel && { infmemModel }) },
      engineConfig,
    );
  }

  /** Stores a new sweep, running and with nothing done yet, then starts it; returns its id. */
  private async create(
    sweep: Omit<EvaluationRecord, 'completed' | 'status' | 'createdAt' | 'updatedAt' | 'engineConfig'>,
    engineConfig: EvaluationRecord['engineConfig'],
  ): Promise<string> {
    const now = Date.now();
    const evaluation: EvaluationRecord = { ...sweep, completed: 0, status: 'running', createdAt: now, updatedAt: now };
    if (engineConfig && Object.keys(engineConfig).length) evaluation.engineConfig = engineConfig;
    await this.deps.store.createEvaluation(evaluation);
    this.jobs.begin(evaluation.id);
    return evaluation.id;
  }

  /**
   * Deletes a sweep with its samples and dataset items. A sweep that is
   * reading is refused: it is paused or cancelled first, as a run is.
   */
  async delete(id: string): Promise<void> {
    const { store, publish } = this.deps;
    const evaluation = await store.getEvaluation(id);
    if (!evaluation) return;
    if (evaluation.status === 'running') throw new RequestError('The evaluation is still running: pause or cancel it, then delete it.');
    this.jobs.abort(id);
    await store.deleteEvaluation(id);
    // Every tab re-reads its list on a status event; the sweep is no longer in storage.
    publish({ type: 'status', evaluationId: id, status: 'cancelled' });
  }

  /**
   * What another tab did: a pause or cancel stops the reader here; a sweep
   * that starts reading there gets a standby here, which carries on from the
   * next sample if that tab closes or crashes.
   */
  handleControl(event: EvaluationEvent): void {
    if (event.type === 'control') this.jobs.abort(event.evaluationId);
    else if (event.type === 'status' && event.status === 'running') this.jobs.standBy(event.evaluationId);
  }

  private async essay(source: EvaluationHaystack): Promise<Haystack> {
    if (source.kind === 'generated') return generatedEssay();
    let h = this.haystacks.get(source.documentId);
    if (!h) {
      const text = await this.deps.store.getText(source.documentId);
      if (text === undefined) throw new Error(`The document "${source.name}" that fills the essay tasks is no longer stored.`);
      h = Haystack.fromText(source.name, text);
      this.haystacks.set(source.documentId, h);
    }
    return h;
  }

  /** Reads a sweep's unfinished samples in order, each stored with the sweep's progress (the host's JobKind.read). */
  private async read(id: string, job: JobContext): Promise<void> {
    const { store, publish } = this.deps;
    const { signal } = job;
    const evaluation = await store.getEvaluation(id);
    if (!evaluation || evaluation.status !== 'running' || signal.aborted) return;
    const engine = await job.engine(evaluation.engineId, evaluation.engineConfig);
    const finished = new Set(await store.listEvaluationOrdinals(id));
    const step = this.stepReporter(id);
    const commit = (result: SampleResult | Omit<DatasetSampleRecord, 'evaluationId' | 'committedAt'>) =>
      this.commit({ ...result, evaluationId: id, committedAt: Date.now() }, job);
    if (evaluation.dataset) {
      await readDataset(this.deps, evaluation, { engine, job, finished, step, commit });
    } else {
      const essay = await this.essay(evaluation.haystack);
      const methods = evaluation.spec.methods ?? ['memagent'];
      if (methods.includes('memagent')) await this.readSweep(evaluation, job, { engine, essay, finished, step });
      const planned = planSweep(evaluation.spec);
      const offset = methods.indexOf('infmem') * planned.length;
      // The model's steps (its files, its load) are made only where InfMem has samples left to read.
      if (methods.includes('infmem') && planned.some((s) => !finished.has(s.ordinal + offset))) {
        const stepsFor = await infmemStepsOf(this.deps, { evaluation, engine, signal, verbatim: false });
        await readInfmemSamples(evaluation.spec, { engine, essay, finished, step, signal, offset, stepsFor, commit });
      }
    }
    await store.updateEvaluation(id, () => ({ status: 'done', error: undefined, finishedAt: Date.now() }));
    publish({ type: 'status', evaluationId: id, status: 'done' });
  }

  /** MemAgent's samples of a sweep, each stored as it ends. */
  private async readSweep(evaluation: EvaluationRecord, job: JobContext, run: SweepRead): Promise<void> {
    const { engine, essay, finished, step } = run;
    // An engine that writes several sequences in one pass reads as many samples together as one batch of the sweep's
    // step holds, each its own book and question. A server's samples go one at a time, each stored as it ends.
    const group = await sampleGroup(engine, sweepStepTokens(evaluation.spec, { contextWindow: engine.contextWindow, count: (s) => engine.tokenizer.count(s) }));
    const together = togetherOf(engine, group);
    const sweep = runSweep(
      evaluation.spec,
      {
        generator: heedingStops(engine),
        tokenizer: engine.tokenizer,
        contextWindow: engine.contextWindow,
        essay,
        signal: job.signal,
        onStep: ({ ordinal, chunk, chunks }) => step(ordinal, chunk, chunks),
        fatal: stopsEverySample,
        ...(together && { together }),
      },
      finished,
    );
    for await (const result of sweep) await this.commit({ ...result, evaluationId: evaluation.id, committedAt: Date.now() }, job);
  }

  /** Stores a finished sample with the sweep's progress, then tells every tab. */
  private async commit(sample: EvaluationSampleRecord | DatasetSampleRecord, job: JobContext): Promise<void> {
    await this.deps.store.commitEvaluationSample(sample);
    job.stored();
    this.deps.publish({ type: 'sample', evaluationId: sample.evaluationId, ordinal: sample.ordinal });
  }

  /** Progress inside a sample, told at most every `stepIntervalMs` (and always at a sample's last chunk). */
  private stepReporter(evaluationId: string): (ordinal: number, chunk: number, chunks: number) => void {
    const interval = this.deps.stepIntervalMs ?? 200;
    let lastStep = 0;
    return (ordinal, chunk, chunks) => {
      const t = Date.now();
      if (t - lastStep < interval && chunk < chunks) return;
      lastStep = t;
      this.deps.publish({ type: 'step', evaluationId, ordinal, chunk, chunks });
    };
  }
}

/** A sweep's tasks and lengths, checked with its mode and samples per cell. */
function sweepCells(request: EvaluationRequest): { tasks: TaskId[]; lengths: number[] } {
  const tasks = [...new Set(request.tasks)];
  if (tasks.length === 0) throw new RequestError('Choose at least one task.');
  const unknown = tasks.filter((t) => !isTaskId(t));
  if (unknown.length) throw new RequestError(`Unknown task ${unknown.join(', ')}.`);
  if (request.mode !== 'memory' && request.mode !== 'full') throw new RequestError('The reading mode is memory or full.');
  const lengths = [...new Set(request.lengths)].sort((a, b) => a - b);
  if (lengths.length === 0) throw new RequestError('Choose at least one length.');
  if (lengths.some((l) => !Number.isInteger(l) || l < MIN_LENGTH || l > MAX_LENGTH)) {
    throw new RequestError('Lengths go from 1K to 64M tokens.');
  }
  if (!Number.isInteger(request.samples) || request.samples < 1 || request.samples > 1000) {
    throw new RequestError('Samples per cell must be a whole number from 1 to 1,000.');
  }
  return { tasks: tasks as TaskId[], lengths };
}
