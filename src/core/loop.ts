import { type AnswerStyle, extractAnswer, memoryFromReply, type MemoryKeeping } from './answer';
import type { ChunkSource } from './chunk-feed';
import type { ChunkSpan } from './chunker';
import { abortError, type GenerateResult, type TextGenerator } from './generation';
import { finalPrompt, INITIAL_MEMORY, type PromptTemplates, renderTemplate, updatePrompt } from './prompts';

export interface SamplingSettings {
  temperature: number;
  topP: number;
  seed?: number;
}

/**
 * What differs between this app's reading and the paper's method inside the
 * loop (how chunks are cut is the caller's: it passes the chunks).
 */
export interface LoopMethod {
  memory: MemoryKeeping;
  answerStyle: AnswerStyle;
  /**
   * Whether the question, memory and chunk are sent as they are (the paper's
   * requests, byte for byte) or with chat control strings such as
   * `<|im_start|>` made inert (this app's reading of untrusted books).
   */
  verbatim: boolean;
}

/** This app's reading: trimmed memories, the lenient answer, control strings made inert. */
export const APP_LOOP_METHOD: Readonly<LoopMethod> = Object.freeze({ memory: 'trimmed', answerStyle: 'lenient', verbatim: false });

/** This app's reading, with the answer read as the run's prompt set asks (its declared style), for runs, follow-ups and the CLI alike. */
export function appLoopMethod(answerStyle: AnswerStyle | undefined): LoopMethod {
  return { ...APP_LOOP_METHOD, answerStyle: answerStyle ?? APP_LOOP_METHOD.answerStyle };
}

/** The paper's method: memories kept verbatim, its answer style, text sent as it is. */
export function paperLoopMethod(answerStyle: Extract<AnswerStyle, 'recurrent' | 'recurrent-boxed'>): LoopMethod {
  return { memory: 'verbatim', answerStyle, verbatim: true };
}

export interface LoopInput {
  /** The book's text (or what reads ranges of it: a book still arriving), from which each chunk's characters are taken. */
  text: { slice(start: number, end: number): string };
  /** A list of chunks, or a source still cutting the book (reading starts with its first chunk). */
  chunks: readonly ChunkSpan[] | ChunkSource;
  question: string;
  generator: TextGenerator;
  templates: PromptTemplates;
  /** Memory cap M: the most tokens one memory update may write. */
  memoryTokens: number;
  sampling: SamplingSettings;
  /** The memory before the first chunk: the prompt set's (INITIAL_MEMORY unless given). */
  initialMemory?: string;
  /** Where to pick up: the next chunk to read and the memory written before it. */
  resume?: { nextChunk: number; memory: string };
  signal?: AbortSignal;
  onToken?: (delta: string) => void;
  /** This app's reading unless given. */
  method?: LoopMethod;
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
  /** The answer in the reply; '' when a strict answer style finds none. */
  answer: string;
  result: GenerateResult;
  ms: number;
}

export type LoopEvent = RevisionEvent | AnswerEvent;

/**
 * The MemAgent loop. Each chunk is one independent request holding the question,
 * the memory so far and the chunk; the reply overwrites the memory. After
 * the last chunk one more request answers from the question and memory alone.
 * Resumable from (next chunk, memory) alone; stops at the next await once
 * `signal` aborts, without yielding a partial step.
 */
export async function* memoryLoop(input: LoopInput): AsyncGenerator<LoopEvent, void, void> {
  const { text, chunks, question, generator, templates, signal } = input;
  const method = input.method ?? APP_LOOP_METHOD;
  const now = input.now ?? (() => performance.now());
  let memory = input.resume?.memory ?? input.initialMemory ?? INITIAL_MEMORY;
  const first = input.resume?.nextChunk ?? 0;
  const options = stepOptions(input);

  for (let index = first; ; index++) {
    if (signal?.aborted) throw abortError();
    const span = await chunks.at(index);
    if (!span) break;
    const section = span.text ?? text.slice(span.start, span.end);
    // Verbatim: filled in one pass as Python's str.format fills the official templates, nothing altered.
    const prompt = method.verbatim
      ? renderTemplate(templates.update, { problem: question, memory, section })
      : updatePrompt(templates, question, memory, section);
    const t0 = now();
    const result = await generator.generate([{ role: 'user', content: prompt }], options);
    if (signal?.aborted || result.finishReason === 'abort') throw abortError();
    memory = memoryFromReply(result.text, method.memory);
    yield { kind: 'revision', index, memory, result, ms: now() - t0 };
  }

  yield await answerFromMemory({
    question,
    memory,
    generator,
    templates,
    memoryTokens: input.memoryTokens,
    sampling: input.sampling,
    signal,
    onToken: input.onToken,
    method,
    now,
  });
}

export type AnswerInput = Pick<LoopInput, 'question' | 'generator' | 'templates' | 'memoryTokens' | 'sampling' | 'signal' | 'onToken' | 'method' | 'now'> & {
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
  const method = input.method ?? APP_LOOP_METHOD;
  const { question, memory, templates } = input;
  const prompt = method.verbatim ? renderTemplate(templates.final, { problem: question, memory }) : finalPrompt(templates, question, memory);
  const result = await generator.generate([{ role: 'user', content: prompt }], stepOptions(input));
  if (signal?.aborted || result.finishReason === 'abort') throw abortError();
  return { kind: 'answer', reply: result.text, answer: extractAnswer(result.text, method.answerStyle) ?? '', result, ms: now() - t0 };
}

/** What every step of the loop, the answer included, asks of the generator. */
function stepOptions(input: Pick<LoopInput, 'memoryTokens' | 'sampling' | 'signal' | 'onToken'>) {
  return {
    maxTokens: input.memoryTokens,
    temperature: input.sampling.temperature,
    topP: input.sampling.topP,
    seed: input.sampling.seed,
    signal: input.signal,
    onToken: input.onToken,
  };
}
