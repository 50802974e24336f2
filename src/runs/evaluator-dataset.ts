/**
 * Evaluations of RULER-HotpotQA files in the worker: the request checked and
 * the files' items stored (nothing left behind when a file or a setting is
 * refused), then the items read by each method the evaluation names in turn,
 * MemAgent's by the paper's method, InfMem's as its `ruler_hqa.py` reads
 * them, each method's ordinals after the one before, so that a reload
 * resumes from the next unread item of either.
 */
import { DEFAULT_EARLY_STOP } from '../core/infmem/planner-state';
import { templateProblem } from '../core/prompts';
import { type Engine, withoutSecrets } from '../engines/engine';
import { promptsUsed } from '../eval/dataset-report';
import { defaultMethod, isMethodId, METHOD_CUTTER, type MethodSettings, methodSettings, methodStepTokens, readItem } from '../eval/method';
import { sweepSpec } from '../eval/sweep';
import { readTogether } from '../eval/together';
import { sampleGroup, stopsEverySample, togetherOf } from '../engines/sample-groups';
import type { DatasetItemRecord, DatasetSampleRecord, EvaluationRecord, Store } from '../storage/db';
import type { EngineCache } from '../jobs/engines';
import type { JobContext } from '../jobs/host';
import { RequestError } from '../jobs/request-error';
import type { DatasetRequest, EvaluationRequest } from '../agent/protocol';
import { storeDatasetFiles } from './dataset-files';
import { type EvaluationInfmemDeps, infmemModelFor, infmemSpec, infmemStepsOf, methodsOf, readInfmemItems } from './evaluator-infmem';
import { heedingStops } from './heeding-stops';
import { choosePromptSet, type PromptLibrary } from './prompt-files';

export interface DatasetDeps extends EvaluationInfmemDeps {
  store: Pick<Store, 'putDatasetItems' | 'deleteDatasetItems' | 'getDatasetItem' | 'updateEvaluation'>;
  engines: EngineCache;
  /** The MemAgent prompt files; without them dataset evaluations use this app's wording or edited templates. */
  prompts?: Pick<PromptLibrary, 'resolve'>;
  newId?(): string;
}

/** A sweep to store: everything but its progress and times. */
export type NewSweep = Omit<EvaluationRecord, 'completed' | 'status' | 'createdAt' | 'updatedAt' | 'engineConfig'>;

/**
 * MemAgent's method, settings and prompt set for the files, as a read chooses
 * its set. InfMem alone needs none of MemAgent's files: this app's wording
 * stands in the record, and nothing is fetched or refused for it.
 */
async function memagentSettings(deps: DatasetDeps, request: EvaluationRequest, dataset: DatasetRequest, reads: boolean) {
  if (dataset.method !== undefined && !isMethodId(dataset.method)) throw new RequestError('The method is recurrent or recurrent-boxed.');
  const choice = reads ? (dataset.prompts ?? (dataset.templates ? 'custom' : 'auto')) : 'app';
  const prompts = await choosePromptSet(deps.prompts, choice, request.engineId, dataset.templates);
  const templates = { ...prompts.set.templates };
  const problem = templateProblem(templates);
  if (problem) throw new RequestError(problem);
  const settings = methodSettings({
    method: dataset.method ?? defaultMethod(templates, prompts.set.answerStyle),
    templates,
    initialMemory: prompts.set.initialMemory,
    ...(request.chunkTokens !== undefined && { chunkTokens: request.chunkTokens }),
    ...(request.memoryTokens !== undefined && { memoryTokens: request.memoryTokens }),
  });
  if (!Number.isInteger(settings.chunkTokens) || settings.chunkTokens < 1) throw new RequestError('The chunk size must be a whole number of tokens.');
  if (!Number.isInteger(settings.memoryTokens) || settings.memoryTokens < 1) throw new RequestError('The memory size must be a whole number of tokens.');
  return { settings, templates, record: prompts.record };
}

/** Refuses MemAgent's step where the engine cannot hold it. */
function checkStep(settings: MethodSettings, engine: Engine): void {
  const step = methodStepTokens(settings, (s) => engine.tokenizer.count(s));
  if (step <= engine.contextWindow) return;
  throw new RequestError(
    `One step of the method needs up to ${step.toLocaleString('en')} tokens (a ${settings.chunkTokens.toLocaleString('en')}-token chunk, ` +
      `a ${settings.memoryTokens.toLocaleString('en')}-token memory and as long a reply); the engine holds ${engine.contextWindow.toLocaleString('en')}. ` +
      'Choose a smaller chunk size or an engine with a longer context.',
  );
}

/**
 * Checks a dataset evaluation, then stores the items of every dataset file
 * (read in pieces, so that files of hundreds of megabytes fit); returns the
 * sweep to store. A file that cannot be read whole, or InfMem's prompt files
 * that cannot be had, leave nothing behind and say what to do.
 */
export async function planDataset(
  deps: DatasetDeps,
  request: EvaluationRequest,
  onRead?: (bytes: number, total: number) => void,
): Promise<{ sweep: NewSweep; engineConfig: EvaluationRecord['engineConfig'] }> {
  const dataset = request.dataset!;
  if (dataset.files.length === 0) throw new RequestError('Choose at least one dataset file.');
  const names = dataset.files.map((f) => f.name);
  const twice = names.find((n, i) => names.indexOf(n) !== i);
  if (twice) throw new RequestError(`Two dataset files are named ${twice}: results are shown by file name, so give each length once.`);
  const limit = dataset.itemsPerFile;
  if (limit !== undefined && (!Number.isInteger(limit) || limit < 1)) throw new RequestError('Items per file must be a whole number, 1 or more.');
  const methods = methodsOf(request);
  const infmem = infmemSpec({ ...request, mode: 'memory' }, methods);
  const { settings, templates, record } = await memagentSettings(deps, request, dataset, methods.includes('memagent'));
  const engineConfig = withoutSecrets(request.engineConfig);
  const engine = await deps.engines.open(request.engineId, engineConfig);
  if (methods.includes('memagent')) checkStep(settings, engine);
  const infmemModel = methods.includes('infmem') ? await infmemModelFor(deps, engine, request) : undefined;

  const id = deps.newId?.() ?? crypto.randomUUID();
  const { files, items } = await storeDatasetFiles(deps.store, { id, files: dataset.files, limit, onRead });
  const spec = sweepSpec({
    ...infmem,
    tasks: [],
    lengths: [],
    samples: 1,
    mode: 'memory',
    chunkTokens: settings.chunkTokens,
    memoryTokens: settings.memoryTokens,
    templates,
  });
  const sweep: NewSweep = {
    id,
    engineId: request.engineId,
    haystack: { kind: 'generated' },
    spec,
    dataset: { method: settings.method, cutter: METHOD_CUTTER, files, settings, prompts: promptsUsed(record), promptRecord: record },
    total: items * methods.length,
    ...(infmemModel && { infmemModel }),
  };
  return { sweep, engineConfig };
}

/** What reading a dataset evaluation's items needs besides the evaluation: its engine, the items done, where each goes. */
export interface DatasetRead {
  engine: Engine;
  job: JobContext;
  /** Ordinals of the items already stored. */
  finished: ReadonlySet<number>;
  step(ordinal: number, chunk: number, chunks: number): void;
  commit(result: Omit<DatasetSampleRecord, 'evaluationId' | 'committedAt'>): Promise<void>;
}

/** The stored items one method's pass has not read yet, in order, each fetched as it is wanted; `offset` is the pass's first ordinal. */
async function* unreadItems(store: DatasetDeps['store'], evaluation: EvaluationRecord, pass: { offset: number; count: number; finished: ReadonlySet<number> }) {
  for (let i = 0; i < pass.count; i++) {
    const ordinal = pass.offset + i;
    if (pass.finished.has(ordinal)) continue;
    const item: DatasetItemRecord | undefined = await store.getDatasetItem(evaluation.id, i);
    if (!item) throw new Error(`Item ${i + 1} of this evaluation's dataset files is no longer stored. Start the evaluation again with the files.`);
    yield { ordinal, item };
  }
}

/** Reads each method's unread items in turn, each stored with the evaluation's progress as it is scored. */
export async function readDataset(deps: DatasetDeps, evaluation: EvaluationRecord, read: DatasetRead): Promise<void> {
  const methods = evaluation.spec.methods ?? ['memagent'];
  const count = evaluation.total / methods.length;
  for (const [k, method] of methods.entries()) {
    const pass = { offset: k * count, count, finished: read.finished };
    let left = 0;
    for (let i = 0; i < count; i++) if (!read.finished.has(pass.offset + i)) left++;
    if (left === 0) continue;
    const items = unreadItems(deps.store, evaluation, pass);
    if (method === 'memagent') await readMemagentItems(evaluation.dataset!.settings, items, read);
    else {
      const { engine, job } = read;
      // Dataset files by InfMem's method: each request the official code's, byte for byte.
      const stepsFor = await infmemStepsOf(deps, { evaluation, engine, signal: job.signal, verbatim: true });
      const earlyStop = evaluation.spec.earlyStop ?? DEFAULT_EARLY_STOP;
      await readInfmemItems({ engine, stepsFor, earlyStop, items, signal: job.signal, step: read.step, commit: read.commit });
    }
  }
}

/**
 * MemAgent's pass: in order one at a time, or as many together as one batch
 * of the method's step holds, as generated samples are.
 */
async function readMemagentItems(
  settings: MethodSettings,
  items: AsyncIterable<{ ordinal: number; item: DatasetItemRecord }>,
  read: DatasetRead,
): Promise<void> {
  const { engine, job, step } = read;
  const { signal } = job;
  const stepTokens = methodStepTokens(settings, (s) => engine.tokenizer.count(s));
  await engine.prepare?.(stepTokens, signal);
  const together = togetherOf(engine, await sampleGroup(engine, stepTokens));
  const reads = readTogether(items, together, async ({ ordinal, item }, generator) => ({
    ordinal,
    result: await readItem(item, item.file, settings, {
      generator: heedingStops(generator ?? engine),
      tokenizer: engine.tokenizer,
      signal,
      onStep: ({ chunk, chunks }) => step(ordinal, chunk, chunks),
      fatal: stopsEverySample,
    }),
  }));
  for await (const { ordinal, result } of reads) await read.commit({ ...result, kind: 'dataset', method: 'memagent', ordinal });
}
