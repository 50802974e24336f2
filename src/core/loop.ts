import { extractAnswer } from './answer';
import type { ChunkSource } from './chunk-feed';
import type { ChunkSpan } from './chunker';
import { abortError, type GenerateResult, type TextGenerator } from './generation';
import { finalPrompt, INITIAL_MEMORY, type PromptTemplates, updatePrompt } from './prompts';

export interface SamplingSettings {
  temperature: number;
  topP: number;
  seed?: number;
}

export interface LoopInput {
  text: string;
  /** A list of chunks, or a source still cutting the book (reading starts with its first chunk). */
  chunks: readonly ChunkSpan[] | ChunkSource;
  question: string;
  generator: TextGenerator;
  templates: PromptTemplates;
  /** Memory cap M: the most tokens one memory update may write. */
  memoryTokens: number;
  sampling: SamplingSettings;
  /** Where to pick up: the next chunk to read and the memory written before it. */
  resume?: { nextChunk: number; memory: string };
  signal?: AbortSignal;
  onToken?: (delta: string) => void;
  /** Clock in milliseconds; replaceable so that tests are deterministic. */
  now?: () => number;
}

export interface RevisionEvent {
  kind: 'revision';
  /** Index of the chunk that was read (0-based). */
  index: number;
  memory: string;
  result: GenerateResult;
  ms: number;
}

export interface AnswerEvent {
  kind: 'answer';
  reply: string;
  answer: string;
  result: GenerateResult;
  ms: number;
}

export type LoopEvent = RevisionEvent | AnswerEvent;

/**
 * The MemAgent loop. Each chunk is one independent request holding the question,
 * the memory so far and the chunk; the whole reply overwrites the memory. After
 * the last chunk one more request answers from the question and memory alone.
 * Resumable from (next chunk, memory) alone; stops at the next await once
 * `signal` aborts, without yielding a partial step.
 */
export async function* memoryLoop(input: LoopInput): AsyncGenerator<LoopEvent, void, void> {
  const { text, chunks, question, generator, templates, signal } = input;
  const now = input.now ?? (() => performance.now());
  let memory = input.resume?.memory ?? INITIAL_MEMORY;
  const first = input.resume?.nextChunk ?? 0;
  const options = {
    maxTokens: input.memoryTokens,
    temperature: input.sampling.temperature,
    topP: input.sampling.topP,
    seed: input.sampling.seed,
    signal,
    onToken: input.onToken,
  };

  for (let index = first; ; index++) {
    if (signal?.aborted) throw abortError();
    const span = await chunks.at(index);
    if (!span) break;
    const prompt = updatePrompt(templates, question, memory, text.slice(span.start, span.end));
    const t0 = now();
    const result = await generator.generate([{ role: 'user', content: prompt }], options);
    if (signal?.aborted || result.finishReason === 'abort') throw abortError();
    memory = result.text.trim();
    yield { kind: 'revision', index, memory, result, ms: now() - t0 };
  }

  yield await answerFromMemory({ question, memory, generator, templates, memoryTokens: input.memoryTokens, sampling: input.sampling, signal, onToken: input.onToken, now });
}

export type AnswerInput = Pick<LoopInput, 'question' | 'generator' | 'templates' | 'memoryTokens' | 'sampling' | 'signal' | 'onToken' | 'now'> & {
  /** The memory to answer from (a run's final memory). */
  memory: string;
};

/**
 * The loop's last step on its own: one request from the question and a memory,
 * no reading. A run answers its question with it, and a finished run answers a
 * new question from its final memory with the very same request.
 */
export async function answerFromMemory(input: AnswerInput): Promise<AnswerEvent> {
  const { signal, generator } = input;
  const now = input.now ?? (() => performance.now());
  if (signal?.aborted) throw abortError();
  const t0 = now();
  const result = await generator.generate([{ role: 'user', content: finalPrompt(input.templates, input.question, input.memory) }], {
    maxTokens: input.memoryTokens,
    temperature: input.sampling.temperature,
    topP: input.sampling.topP,
    seed: input.sampling.seed,
    signal,
    onToken: input.onToken,
  });
  if (signal?.aborted || result.finishReason === 'abort') throw abortError();
  return { kind: 'answer', reply: result.text, answer: extractAnswer(result.text), result, ms: now() - t0 };
}
