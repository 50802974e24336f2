import { type AnswerStyle, extractAnswer } from '../core/answer';
import { abortError, isAbortError, type TextGenerator, withOwnTuner } from '../core/generation';
import { memoryLoop, paperLoopMethod } from '../core/loop';
import { DEFAULT_READ_SETTINGS, type ReadSettings } from '../core/plan';
import { type PromptTemplates, templateOverhead } from '../core/prompts';
import { type ChunkCutter, sliceTokens } from '../core/token-slices';
import type { Tokenizer } from '../core/tokenizer';
import type { DatasetItem } from './dataset';
import { type PaperScores, scorePrediction } from './paper-score';

/**
 * The paper's method, end to end: chunks are exact token slices of the
 * context, each reply is the next memory as returned, and the final answer is
 * extracted and scored by the paper's rules.
 */
export type MethodId = 'recurrent' | 'recurrent-boxed';

export const METHOD_IDS: readonly MethodId[] = ['recurrent', 'recurrent-boxed'];

export const METHOD_LABELS: Readonly<Record<MethodId, string>> = {
  recurrent: 'recurrent: the answer after "the answer is" (the paper\'s RULER-HotpotQA runs)',
  'recurrent-boxed': "recurrent-boxed: the answer in \\boxed{} (the paper's training layout)",
};

/** How every method cuts its chunks. */
export const METHOD_CUTTER: ChunkCutter = 'token-slices';

export function isMethodId(value: unknown): value is MethodId {
  return value === 'recurrent' || value === 'recurrent-boxed';
}

/**
 * The method that reads the answers a prompt set asks for: `recurrent` for a
 * final prompt that asks for "the answer is …", `recurrent-boxed` for one that
 * asks for \boxed{}. Without a declared style, the final template tells.
 */
export function defaultMethod(templates: PromptTemplates, answerStyle?: AnswerStyle): MethodId {
  if (answerStyle === 'recurrent' || answerStyle === 'recurrent-boxed') return answerStyle;
  return templates.final.includes('\\boxed') ? 'recurrent-boxed' : 'recurrent';
}

/**
 * The method's settings: the read settings, where the chunk size is exact
 * (the paper: 5000 tokens) and the memory size is every request's max_tokens,
 * memory updates and the answer alike (the paper: 1024).
 */
export interface MethodSettings extends Omit<ReadSettings, 'seed'> {
  method: MethodId;
  templates: PromptTemplates;
  /** The memory before the first chunk: the prompt set's NO_MEMORY (this app's when absent). */
  initialMemory?: string;
}

/** Settings with the paper's values wherever none is given. */
export function methodSettings(settings: Partial<MethodSettings> & Pick<MethodSettings, 'method' | 'templates'>): MethodSettings {
  return { ...DEFAULT_READ_SETTINGS, ...settings };
}

/** One dataset item read and scored. */
export interface ItemResult {
  /** The dataset file's name. */
  file: string;
  index: number;
  numDocs: number | null;
  question: string;
  answers: string[];
  /** Tokens of the stripped context. */
  contextTokens: number;
  chunks: number;
  /** Chunks read into the memory: all of them for MemAgent, those before the planner stopped for InfMem. */
  chunksRead?: number;
  /** Calls the engine answered, the final answer's included. */
  requests?: number;
  /** The final reply as returned. */
  reply: string;
  /** The extracted answer; null when the reply holds none in the method's form. */
  prediction: string | null;
  /** Null when a request failed: the item is left out of the averages, as the paper leaves it out. */
  scores: PaperScores | null;
  /** Why the item could not be read. */
  failed?: string;
  promptTokens: number;
  completionTokens: number;
  ms: number;
}

export interface MethodContext {
  generator: TextGenerator;
  tokenizer: Tokenizer;
  signal?: AbortSignal;
  now?: () => number;
  /** After each memory update: for progress inside long items. */
  onStep?(step: { chunk: number; chunks: number }): void;
  /** Whether a failure means the engine itself cannot go on (see SweepContext.fatal): it is thrown, not kept as the item's. */
  fatal?(error: unknown): boolean;
}

/** A generous bound on a HotpotQA question, for sizing a step before the items are read. */
export const ITEM_QUESTION_TOKENS_BOUND = 128;

/**
 * The most tokens one step of the method holds: the update template, a
 * question, the chunk, the memory and as long a reply. The engine's window
 * must hold it, and batches are sized at it.
 */
export function methodStepTokens(settings: Pick<MethodSettings, 'templates' | 'chunkTokens' | 'memoryTokens'>, count: (text: string) => number): number {
  return templateOverhead(settings.templates.update, count) + ITEM_QUESTION_TOKENS_BOUND + settings.chunkTokens + 2 * settings.memoryTokens;
}

/**
 * Reads one item by the method and scores its answer. A request that fails
 * (after the engine's own retries) or an empty final reply makes the item
 * failed, not wrong; stopping (the signal) throws.
 */
export async function readItem(item: DatasetItem, file: string, settings: MethodSettings, ctx: MethodContext): Promise<ItemResult> {
  if (ctx.signal?.aborted) throw abortError();
  const now = ctx.now ?? (() => performance.now());
  const t0 = now();
  const chunks = sliceTokens(item.context, ctx.tokenizer, settings.chunkTokens);
  const result: ItemResult = {
    file,
    index: item.index,
    numDocs: item.numDocs,
    question: item.question,
    answers: item.answers,
    contextTokens: chunks.reduce((n, c) => n + c.tokens, 0),
    chunks: chunks.length,
    reply: '',
    prediction: null,
    scores: null,
    promptTokens: 0,
    completionTokens: 0,
    ms: 0,
  };
  try {
    const loop = memoryLoop({
      text: item.context,
      chunks,
      question: item.question,
      generator: withOwnTuner(ctx.generator),
      templates: settings.templates,
      memoryTokens: settings.memoryTokens,
      sampling: { temperature: settings.temperature, topP: settings.topP },
      ...(settings.initialMemory !== undefined && { initialMemory: settings.initialMemory }),
      method: paperLoopMethod(settings.method),
      signal: ctx.signal,
      now: ctx.now,
    });
    for await (const event of loop) {
      result.requests = (result.requests ?? 0) + 1;
      result.promptTokens += event.result.usage.promptTokens;
      result.completionTokens += event.result.usage.completionTokens;
      if (event.kind === 'revision') {
        result.chunksRead = (result.chunksRead ?? 0) + 1;
        ctx.onStep?.({ chunk: event.index + 1, chunks: chunks.length });
      } else result.reply = event.reply;
    }
  } catch (e) {
    if (isAbortError(e) || ctx.signal?.aborted) throw abortError();
    if (ctx.fatal?.(e)) throw e;
    result.failed = e instanceof Error ? e.message : String(e);
  }
  if (!result.failed && result.reply === '') result.failed = 'The model returned an empty answer.';
  if (!result.failed) {
    result.prediction = extractAnswer(result.reply, settings.method);
    result.scores = scorePrediction(result.prediction, item.answers);
  }
  result.ms = now() - t0;
  return result;
}
