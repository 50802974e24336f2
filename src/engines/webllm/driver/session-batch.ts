/**
 * A batch as the GPU session writes it, the lock already held: each request
 * prepared through WebLLM's own request code (driver-batch.ts) and written in
 * one batch (batch-writer.ts), or, where the model library cannot write a
 * batch, the requests in turns as single requests. WebLLM's errors come out
 * explained as a single request's would.
 */
import { DeviceLostError } from '../../errors';
import { stepRequest, webllmRequest } from '../../request';
import { type BatchOutcome, writeBatch } from './batch-writer';
import { batchBlocker, type BatchPipeline, endBatch, webllmBatchModel } from './driver-batch';
import { canVerifyPipeline } from './driver';
import { type ErrorContext, explainError } from '../explain-error';
import type { SessionRequest } from './session-request';
import type { SequenceWriter } from './batch-model';
import type { Mlc } from './mlc';
import type { ModelEntry } from '../models/models';
import type { WebLLMVersion } from '../versions';
import type { GenerateResult } from '../../../core/generation';

/** What a batch wrote; `batched` false where the requests took turns, `lost` where the device was lost. */
export interface SessionBatch extends BatchOutcome {
  batched: boolean;
  lost: boolean;
  /** The milliseconds each row's sampling distribution took in the batch, in order (none where the requests took turns). */
  samplingMs: number[];
}

/** A batch's request to the loaded pipeline, with what the session lends it. */
export interface BatchOnPipeline {
  mlc: Mlc;
  model: ModelEntry;
  pipeline: BatchPipeline;
  requests: readonly SessionRequest[];
  /** For the errors it explains; its WebLLM version also reads the prompts. */
  context: ErrorContext & { webllm: WebLLMVersion };
  /** A single request as the session writes it: where the requests take turns. */
  send(request: SessionRequest): Promise<{ result: GenerateResult; tokens: number[] }>;
}

/** Writes `b.requests` as one batch where the library can, in turns where not (see the file's comment). */
export async function batchOnPipeline(b: BatchOnPipeline): Promise<SessionBatch> {
  const { mlc, model, pipeline, requests, context } = b;
  if (batchBlocker(pipeline)) {
    const turns = await inTurns(requests, b.send);
    return { ...turns, batched: false, lost: turns.results.some((r) => r.status === 'rejected' && r.reason instanceof DeviceLostError), samplingMs: [] };
  }
  const verifiable = canVerifyPipeline(pipeline);
  const samplingMs: number[] = [];
  const onWebLLM = webllmBatchModel({
    version: context.webllm,
    mlc,
    pipeline,
    body: (i) => {
      const { messages, options, system } = requests[i]!;
      return webllmRequest(stepRequest(messages, options, system));
    },
  });
  const outcome = await writeBatch(
    {
      ...onWebLLM,
      prepare: async (i) => {
        try {
          const prepared = await onWebLLM.prepare(i);
          return { ...prepared, writer: timedSampling(prepared.writer, samplingMs) };
        } catch (e) {
          throw explainError(e, model, context);
        }
      },
    },
    requests.map((r) => ({ options: r.options, ...(verifiable && r.speculation && { plan: r.speculation }) })),
  );
  endBatch(pipeline);
  if (outcome.failure === undefined) return { ...outcome, batched: true, lost: false, samplingMs };
  const err = explainError(outcome.failure, model, context);
  outcome.results = outcome.results.map((r) => (r.status === 'rejected' && r.reason === outcome.failure ? { status: 'rejected', reason: err } : r));
  return { ...outcome, batched: true, lost: err instanceof DeviceLostError, samplingMs };
}

/** `writer` with the milliseconds of each row's sampling distribution (penalties, tempered softmax, top-p) put in `ms`. */
function timedSampling(writer: SequenceWriter, ms: number[]): SequenceWriter {
  return {
    ...writer,
    distribution: (row) => {
      const started = performance.now();
      const p = writer.distribution(row);
      ms.push(performance.now() - started);
      return p;
    },
  };
}

/** Requests one after another, each as the session sends it, each settled on its own: where a batch cannot be written. */
async function inTurns(requests: readonly SessionRequest[], send: BatchOnPipeline['send']): Promise<BatchOutcome> {
  const outcome: BatchOutcome = { results: [], tokens: [], passes: { prefill: 0, write: 0 }, drafted: 0, kept: 0 };
  for (const request of requests) {
    try {
      const { result, tokens } = await send(request);
      outcome.results.push({ status: 'fulfilled', value: result });
      outcome.tokens.push(tokens);
      outcome.drafted += result.usage.writing?.drafted ?? 0;
      outcome.kept += result.usage.writing?.accepted ?? 0;
    } catch (reason) {
      outcome.results.push({ status: 'rejected', reason });
      outcome.tokens.push([]);
      if (reason instanceof DeviceLostError) break; // the model is gone: the rest cannot be written either
    }
  }
  while (outcome.results.length < requests.length) {
    const last = outcome.results.at(-1)!;
    outcome.results.push({ status: 'rejected', reason: last.status === 'rejected' ? last.reason : new Error('Not written.') });
    outcome.tokens.push([]);
  }
  return outcome;
}
