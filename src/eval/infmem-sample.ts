/**
 * A generated sample read by InfMem's loop: the same document and question
 * MemAgent's sweep makes from the same seed, so the two methods are compared
 * on the same items, scored by the same task metric.
 */
import { extractAnswer } from '../core/answer';
import { abortError } from '../core/generation';
import type { InfmemSteps } from '../core/infmem/loop';
import { type InfmemDocument, prepareDocument, type TokenCodec } from '../core/infmem/retrieval';
import type { Tokenizer } from '../core/tokenizer';
import type { Haystack } from './haystack';
import { readInfmem } from './infmem-read';
import { scoreAnswer } from './score';
import type { PlannedSample, SampleResult } from './sweep';
import { generateSample } from './tasks';

export interface InfmemSampleContext {
  /** The tokenizer the samples are generated with: MemAgent's sweep's, so that the documents are the same. */
  tokenizer: Tokenizer;
  /** What cuts InfMem's chunks and units (Qwen's, as the official code's) and counts its tokens. */
  codec: TokenCodec & Pick<Tokenizer, 'count'>;
  essay: Haystack;
  /** The steps for one document (the extractive stand-ins need the document; a model's do not). */
  stepsFor(document: InfmemDocument): InfmemSteps;
  earlyStop: number;
  signal?: AbortSignal;
  now?: () => number;
  onStep?(step: { ordinal: number; chunk: number; chunks: number }): void;
}

/** Generates one sample, reads it the InfMem way and scores the answer as the sweep scores MemAgent's. */
export async function runInfmemSample(planned: PlannedSample, ctx: InfmemSampleContext): Promise<SampleResult> {
  const now = ctx.now ?? (() => performance.now());
  if (ctx.signal?.aborted) throw abortError();
  const t0 = now();
  const sample = generateSample(planned.task, { seed: planned.seed, tokens: planned.length, tokenizer: ctx.tokenizer, essay: ctx.essay });
  const generateMs = now() - t0;
  const document = prepareDocument(sample.document, ctx.codec);
  const read = await readInfmem({
    document,
    question: sample.question,
    steps: ctx.stepsFor(document),
    earlyStop: ctx.earlyStop,
    count: (s) => ctx.codec.count(s),
    signal: ctx.signal,
    now: ctx.now,
    onStep: (s) => ctx.onStep?.({ ordinal: planned.ordinal, ...s }),
  });
  // Read as MemAgent's sweep reads its answers (the lenient style): the two methods' answers are scored alike.
  const answer = extractAnswer(read.final);
  return {
    ...planned,
    method: 'infmem',
    documentTokens: sample.tokens,
    question: sample.question,
    references: sample.references,
    reply: read.final,
    answer,
    scores: scoreAnswer(sample.metric, answer, sample.references),
    chunks: read.chunks,
    chunksRead: read.chunksRead,
    requests: read.requests,
    chunkMs: read.chunkMs,
    answerMs: read.answerMs,
    generateMs,
    promptTokens: read.promptTokens,
    completionTokens: read.completionTokens,
  };
}
