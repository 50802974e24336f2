/**
 * A RULER-HotpotQA item read by InfMem's method and scored as its official
 * `ruler_hqa.py` scores it: the answer after "the answer is" in the final
 * reply (infmemPrediction), then the paper's em, sub_em and f1 against the
 * first reference. An empty final reply scores 0 there, not left out.
 */
import { abortError, isAbortError } from '../core/generation';
import type { InfmemSteps } from '../core/infmem/loop';
import { type InfmemDocument, prepareDocument, type TokenCodec } from '../core/infmem/retrieval';
import type { Tokenizer } from '../core/tokenizer';
import type { DatasetItem } from './dataset';
import { infmemPrediction, readInfmem } from './infmem-read';
import type { ItemResult } from './method';
import { scorePrediction } from './paper-score';

export interface InfmemItemContext {
  /** Qwen's tokenizer, as the official code cuts with: chunks, units and counts. */
  codec: TokenCodec & Pick<Tokenizer, 'count'>;
  stepsFor(document: InfmemDocument, signal?: AbortSignal): InfmemSteps;
  earlyStop: number;
  signal?: AbortSignal;
  now?: () => number;
  onStep?(step: { chunk: number; chunks: number }): void;
  /** Whether a failure means the engine itself cannot go on: it is thrown, not kept as the item's. */
  fatal?(error: unknown): boolean;
}

/**
 * Reads one item and scores it. A request that fails (after the engine's own
 * retries) leaves the item out of the averages, said in `failed`; stopping
 * (the signal) and a failure `fatal` names throw.
 */
export async function readInfmemItem(item: DatasetItem, file: string, ctx: InfmemItemContext): Promise<ItemResult> {
  if (ctx.signal?.aborted) throw abortError();
  const now = ctx.now ?? (() => performance.now());
  const t0 = now();
  const document = prepareDocument(item.context, ctx.codec);
  const result: ItemResult = {
    file,
    index: item.index,
    numDocs: item.numDocs,
    question: item.question,
    answers: item.answers,
    contextTokens: document.chunks.reduce((n, c) => n + (c.end - c.start), 0),
    chunks: document.chunks.length,
    chunksRead: 0,
    requests: 0,
    reply: '',
    prediction: null,
    scores: null,
    promptTokens: 0,
    completionTokens: 0,
    ms: 0,
  };
  try {
    const read = await readInfmem({
      document,
      question: item.question,
      steps: ctx.stepsFor(document, ctx.signal),
      earlyStop: ctx.earlyStop,
      count: (s) => ctx.codec.count(s),
      signal: ctx.signal,
      now: ctx.now,
      onStep: ctx.onStep,
    });
    Object.assign(result, {
      reply: read.final,
      chunksRead: read.chunksRead,
      requests: read.requests,
      promptTokens: read.promptTokens,
      completionTokens: read.completionTokens,
    });
    result.prediction = infmemPrediction(read.final);
    result.scores = scorePrediction(result.prediction, item.answers);
  } catch (e) {
    if (isAbortError(e) || ctx.signal?.aborted) throw abortError();
    if (ctx.fatal?.(e)) throw e;
    result.failed = e instanceof Error ? e.message : String(e);
  }
  result.ms = now() - t0;
  return result;
}
