/**
 * The model a batch is written on, as batch-writer.ts sees it: each
 * request's prompt and writing state, and one cache with the batched kernels
 * on it. driver-batch.ts gives them on WebLLM; tests give fakes.
 */
import type { FinishReason } from '../../../core/generation';
import type { Distribution } from '../../../core/speculative';

/** One request's writing state: WebLLM's stop rules and text for it (see driver-batch.ts). */
export interface SequenceWriter {
  /** The reply's token ids so far. */
  written(): readonly number[];
  /** The reply's text so far, as WebLLM would return it (stop strings cut). */
  text(): string;
  stopped(): boolean;
  finishReason(): FinishReason;
  /** The request's sampling distribution for one row of logits, penalties as the reply stands. */
  distribution(row: Float32Array): Distribution;
  /** Takes a sampled token into the reply, the sequence then holding `cached` entries before it; false once the reply has ended. */
  commit(token: number, cached: number): boolean;
}

/** A request ready to write: its prompt as WebLLM would prefill it, and its writing state. */
export interface PreparedSequence {
  prompt: readonly number[];
  writer: SequenceWriter;
}

/** A sequence's tokens in one forward pass. */
export interface SequenceTokens {
  seq: number;
  tokens: readonly number[];
}

/** One batch's KV cache and the batched kernels on it. */
export interface BatchKernels {
  /**
   * Runs prompt pieces (each after what its sequence holds) in one pass; gives
   * for each piece the logits of its last token.
   */
  prefill(parts: readonly SequenceTokens[]): Promise<Float32Array[]>;
  /** One token for each sequence in one pass; a row of logits each. */
  decode(parts: readonly SequenceTokens[]): Promise<Float32Array[]>;
  /** Several tokens for each sequence in one pass; a row of logits per token, per sequence. */
  verify(parts: readonly SequenceTokens[]): Promise<Float32Array[][]>;
  /** Drops a sequence's last `n` entries. */
  popn(seq: number, n: number): void;
  /** Frees a sequence that has left the batch. */
  remove(seq: number): void;
  dispose(): void;
}

/** The model a batch is written on. */
export interface BatchModel {
  /** Request `index`'s prompt and writing state, as WebLLM's own request would have them; throws where WebLLM would refuse it. */
  prepare(index: number): Promise<PreparedSequence>;
  /** A cache with one sequence (ids 0…) per entry of `capacities`, each room for that many tokens. */
  open(capacities: readonly number[]): BatchKernels;
  /** The most tokens one forward pass may run (the library's prefill chunk). */
  readonly chunk: number;
  /** The loaded context window: no sequence grows past it. */
  readonly window: number;
}
