import { DraftLength } from './draft-length';
/** What the loop needs from a language model: one stateless chat request at a time. */
export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

export interface GenerateOptions {
  maxTokens: number;
  temperature?: number;
  topP?: number;
  seed?: number;
  signal?: AbortSignal;
  /** Called with each piece of text as it is produced. */
  onToken?: (delta: string) => void;
  /** The run's draft-length tuner, where the engine writes speculatively: one per run, so that it follows that run's text. */
  draftTuner?: DraftLength;
}

export type FinishReason = 'stop' | 'length' | 'abort';

export interface Usage {
  promptTokens: number;
  completionTokens: number;
  prefillTokensPerSecond?: number;
  decodeTokensPerSecond?: number;
  timeToFirstTokenSeconds?: number;
  /** How the reply was written, where the engine drafts tokens and verifies them in batches (speculative decoding). */
  writing?: WritingStats;
}

/**
 * The forward passes a reply took after its prompt, and the drafted tokens
 * those passes checked and kept. Plain decoding: one pass per written token,
 * nothing drafted.
 */
export interface WritingStats {
  passes: number;
  drafted: number;
  accepted: number;
}

export interface GenerateResult {
  text: string;
  finishReason: FinishReason;
  usage: Usage;
  /** Failed attempts (a busy or unreachable server) repeated before this result. */
  retries?: number;
}

export interface TextGenerator {
  generate(messages: readonly ChatMessage[], options: GenerateOptions): Promise<GenerateResult>;
}

/**
 * The generator with a draft-length tuner of its own, given to every request
 * it sends: one per read of one question (a run, a sample of a sweep, a read
 * of the command line), as how much a reply copies follows that read's text.
 */
export function withOwnTuner(generator: TextGenerator): TextGenerator {
  const draftTuner = new DraftLength();
  return { generate: (messages, options) => generator.generate(messages, { ...options, draftTuner }) };
}

/** The error every cancelled step throws, as fetch does. */
export function abortError(): Error {
  const e = new Error('The run was stopped.');
  e.name = 'AbortError';
  return e;
}

export function isAbortError(e: unknown): boolean {
  return e instanceof Error && e.name === 'AbortError';
}
