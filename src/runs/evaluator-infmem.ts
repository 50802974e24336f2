/**
 * InfMem in the worker's evaluation job: which methods a request names, the
 * check before anything is stored (a model's engine and prompt files), the
 * steps of the sweep's engine (the extractive engine's stand-ins, or a
 * model's raw completions through InfMem's official prompts), and InfMem's
 * reads of a sweep's samples or a dataset's items, stored after MemAgent's,
 * their ordinals following on, so that a resumed sweep carries on where it
 * stopped.
 */
import type { InfmemSteps } from '../core/infmem/loop';
import { DEFAULT_EARLY_STOP } from '../core/infmem/planner-state';
import type { InfmemDocument } from '../core/infmem/retrieval';
import type { Engine } from '../engines/engine';
import { extractiveInfmemSteps } from '../engines/extractive/infmem-steps';
import type { Haystack } from '../eval/haystack';
import { readInfmemItem } from '../eval/infmem-item';
import { EVAL_METHODS, type EvalMethod } from '../eval/infmem-read';
import { ITEM_QUESTION_TOKENS_BOUND } from '../eval/method';
import { runInfmemSample } from '../eval/infmem-sample';
import { planSweep, QUESTION_TOKENS_BOUND, type SampleResult, type SweepSpec } from '../eval/sweep';
import { stopsEverySample } from '../engines/sample-groups';
import type { EvaluationRequest } from '../agent/protocol';
import type { DatasetItemRecord, DatasetSampleRecord, EvaluationRecord, InfmemModelRecord, Store } from '../storage/db';
import { RequestError } from '../jobs/request-error';
import { heedingSteps } from './heeding-stops';
import { infmemChat } from './infmem-chat';
import type { InfmemFileLibrary } from './infmem-files';
import { infmemModelSteps, infmemPromptsFor } from './infmem-model';

/** InfMem's sampling in an evaluation: `ruler_hqa.py`'s (temperature 0, top p 1), as `memagent eval` reads. */
export const INFMEM_EVAL_SAMPLING = { temperature: 0, topP: 1 } as const;

/** What the evaluation job lends InfMem: the store that notes a server's chat endpoint, and the pinned files. */
export interface EvaluationInfmemDeps {
  store: Pick<Store, 'updateEvaluation'>;
  infmemFiles?: Pick<InfmemFileLibrary, 'prompts'>;
}

/** What reading a sweep's samples needs: its engine, its essay, the samples done, and who hears of each step. */
export interface SweepRead {
  engine: Engine;
  essay: Haystack;
  finished: ReadonlySet<number>;
  step(ordinal: number, chunk: number, chunks: number): void;
}

/** The methods a request names, MemAgent's first; MemAgent's alone where it names none. */
export function methodsOf(request: EvaluationRequest): EvalMethod[] {
  const named = request.methods ?? [];
  const unknown = named.filter((m) => !EVAL_METHODS.includes(m));
  if (unknown.length) throw new RequestError(`Unknown method ${unknown.join(', ')}: the methods are memagent and infmem.`);
  const methods = EVAL_METHODS.filter((m) => named.includes(m));
  return methods.length ? methods : ['memagent'];
}

/** The spec's InfMem settings for a request that names InfMem (nothing for MemAgent alone), checked: memory mode, the early stop. */
export function infmemSpec(request: EvaluationRequest, methods: readonly EvalMethod[]): Pick<SweepSpec, 'methods' | 'earlyStop' | 'thinking'> {
  if (!methods.includes('infmem')) return {};
  if (request.mode === 'full') throw new RequestError('InfMem reads chunk by chunk: choose the memory mode to compare it.');
  const earlyStop = request.earlyStop ?? DEFAULT_EARLY_STOP;
  if (!Number.isInteger(earlyStop) || earlyStop < 1) throw new RequestError('The early stop must be a whole number of votes, 1 or more.');
  return { methods: [...methods], earlyStop, thinking: request.thinking ?? true };
}

/**
 * What an evaluation by InfMem with a model records before anything is
 * stored: the chat text and where its two prompt files came from, which must
 * be here or be fetched now. The extractive engine needs neither.
 */
export async function infmemModelFor(deps: EvaluationInfmemDeps, engine: Engine, request: EvaluationRequest): Promise<InfmemModelRecord | undefined> {
  if (request.engineId === 'extractive') return undefined;
  const { sources } = await infmemPromptsFor({
    engine,
    engineId: request.engineId,
    files: deps.infmemFiles,
    otherwise: 'choose another engine, or evaluate with MemAgent alone',
    filesHint:
      'Fetch them, or import your copies, under InfMem prompt files on this page (shown with InfMem and a model engine), then start the evaluation again. Nothing was stored.',
  });
  return { family: infmemChat(engine, request.engineConfig).family, files: sources };
}

/**
 * The steps for each document: the extractive engine's stand-ins, or the
 * model's through the kept files' prompts. `verbatim`: dataset files go into
 * the prompts as they are, so that each request is the official code's;
 * generated tasks are read as the app reads a book, control strings inert.
 */
export async function infmemStepsOf(
  deps: EvaluationInfmemDeps,
  { evaluation, engine, signal, verbatim }: { evaluation: EvaluationRecord; engine: Engine; signal: AbortSignal; verbatim: boolean },
): Promise<(document: InfmemDocument) => InfmemSteps> {
  if (evaluation.engineId === 'extractive') return (document) => heedingSteps(extractiveInfmemSteps(document, engine.tokenizer));
  const prompts = await infmemPromptsFor({
    engine,
    engineId: evaluation.engineId,
    files: deps.infmemFiles,
    otherwise: 'start an evaluation with another engine',
    filesHint: 'Fetch them, or import your copies, under InfMem prompt files on the Evaluate page, then resume.',
  });
  const steps = await infmemModelSteps({
    engine,
    prompts,
    chat: infmemChat(engine, evaluation.engineConfig, evaluation.infmemModel?.family),
    thinking: evaluation.spec.thinking ?? true,
    ...INFMEM_EVAL_SAMPLING,
    questionTokens: Math.max(QUESTION_TOKENS_BOUND, ITEM_QUESTION_TOKENS_BOUND),
    signal,
    verbatim,
    ...(!verbatim &&
      !evaluation.infmemModel?.inert && {
        onInert: async () => {
          await deps.store.updateEvaluation(evaluation.id, (now) => ({
            infmemModel: { ...(now.infmemModel ?? { family: 'qwen3', files: prompts.sources }), inert: true },
          }));
        },
      }),
    ...(evaluation.infmemModel?.endpoint !== 'chat' && {
      onChatEndpoint: async () => {
        await deps.store.updateEvaluation(evaluation.id, (now) => ({
          infmemModel: { ...(now.infmemModel ?? { family: 'qwen3', files: prompts.sources }), endpoint: 'chat' },
        }));
      },
    }),
  });
  return () => steps;
}

/** A pass of InfMem's reads: the steps for each document, where its ordinals start, and where each result goes. */
export interface InfmemPass<R> {
  stepsFor(document: InfmemDocument): InfmemSteps;
  signal: AbortSignal;
  /** Ordinals of the pass's first read: the reads of the methods before it come first. */
  offset: number;
  commit(result: R): Promise<void>;
}

/** Reads each planned sample not yet stored the InfMem way; its ordinal is `offset` after the plan's. */
export async function readInfmemSamples(spec: SweepSpec, run: SweepRead & InfmemPass<SampleResult>): Promise<void> {
  const { engine, essay, finished, step } = run;
  for (const sample of planSweep(spec)) {
    const ordinal = sample.ordinal + run.offset;
    if (finished.has(ordinal)) continue;
    const result = await runInfmemSample(
      { ...sample, ordinal },
      {
        tokenizer: engine.tokenizer,
        codec: engine.tokenizer,
        essay,
        stepsFor: run.stepsFor,
        earlyStop: spec.earlyStop ?? DEFAULT_EARLY_STOP,
        signal: run.signal,
        onStep: ({ chunk, chunks }) => step(ordinal, chunk, chunks),
      },
    );
    await run.commit(result);
  }
}

/** What InfMem's pass over a dataset's items reads: each stored item not yet read, with its ordinal in this pass. */
export interface InfmemItems extends Omit<InfmemPass<Omit<DatasetSampleRecord, 'evaluationId' | 'committedAt'>>, 'offset'> {
  engine: Engine;
  earlyStop: number;
  items: AsyncIterable<{ ordinal: number; item: DatasetItemRecord }>;
  step(ordinal: number, chunk: number, chunks: number): void;
}

/**
 * Reads a dataset's items by InfMem's loop and scores them as its official
 * `ruler_hqa.py` does, one at a time, each stored as it is scored. A request
 * that fails leaves the item out as failed; an engine that cannot go on
 * stops the evaluation.
 */
export async function readInfmemItems(run: InfmemItems): Promise<void> {
  const { engine } = run;
  for await (const { ordinal, item } of run.items) {
    const result = await readInfmemItem(item, item.file, {
      codec: engine.tokenizer,
      stepsFor: run.stepsFor,
      earlyStop: run.earlyStop,
      signal: run.signal,
      onStep: ({ chunk, chunks }) => run.step(ordinal, chunk, chunks),
      fatal: stopsEverySample,
    });
    await run.commit({ ...result, kind: 'dataset', method: 'infmem', ordinal });
  }
}
