/**
 * InfMem in the worker's evaluation job: which methods a request names, and
 * InfMem's reads of a sweep's samples with the extractive engine's stand-ins
 * for its planner and writer, stored after MemAgent's, their ordinals
 * following on, so that a resumed sweep carries on where it stopped.
 */
import { DEFAULT_EARLY_STOP } from '../core/infmem/planner-state';
import type { Engine } from '../engines/engine';
import { extractiveInfmemSteps } from '../engines/extractive/infmem-steps';
import type { Haystack } from '../eval/haystack';
import { EVAL_METHODS, type EvalMethod } from '../eval/infmem-read';
import { runInfmemSample } from '../eval/infmem-sample';
import { planSweep, type SampleResult, type SweepSpec } from '../eval/sweep';
import type { EvaluationRequest } from '../agent/protocol';
import { RequestError } from '../jobs/request-error';

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

/** The spec's InfMem settings for a request that names InfMem (nothing for MemAgent alone), checked: memory mode, the extractive engine. */
export function infmemSpec(request: EvaluationRequest, methods: readonly EvalMethod[]): Pick<SweepSpec, 'methods' | 'earlyStop'> {
  if (!methods.includes('infmem')) return {};
  if (request.mode === 'full') throw new RequestError('InfMem reads chunk by chunk: choose the memory mode to compare it.');
  if (request.engineId !== 'extractive') {
    throw new RequestError(
      'On this page InfMem reads with the extractive engine (its stand-in planner and writer). With a model, run memagent eval --method infmem or both against a server.',
    );
  }
  const earlyStop = request.earlyStop ?? DEFAULT_EARLY_STOP;
  if (!Number.isInteger(earlyStop) || earlyStop < 1) throw new RequestError('The early stop must be a whole number of votes, 1 or more.');
  return { methods: [...methods], earlyStop };
}

/**
 * Reads each planned sample not yet stored the InfMem way; its ordinal is
 * `offset` sweeps' worth of samples after the plan's.
 */
export async function readInfmemSamples(
  spec: SweepSpec,
  run: SweepRead & { signal: AbortSignal; offset: number; commit(result: SampleResult): Promise<void> },
): Promise<void> {
  const { engine, essay, finished, step } = run;
  const planned = planSweep(spec);
  const shift = run.offset * planned.length;
  for (const sample of planned) {
    const ordinal = sample.ordinal + shift;
    if (finished.has(ordinal)) continue;
    const result = await runInfmemSample(
      { ...sample, ordinal },
      {
        tokenizer: engine.tokenizer,
        codec: engine.tokenizer,
        essay,
        stepsFor: (document) => extractiveInfmemSteps(document, engine.tokenizer),
        earlyStop: spec.earlyStop ?? DEFAULT_EARLY_STOP,
        signal: run.signal,
        onStep: ({ chunk, chunks }) => step(ordinal, chunk, chunks),
      },
    );
    await run.commit(result);
  }
}
