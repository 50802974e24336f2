import type { TextGenerator } from '../core/generation';
import type { Tokenizer } from '../core/tokenizer';

/** One runtime that can read: a model (or a heuristic) behind the loop's generate call. */
export interface Engine extends TextGenerator {
  readonly id: string;
  /** Tokens one request may hold, prompt and reply together. */
  readonly contextWindow: number;
  readonly tokenizer: Tokenizer;
}

/** What the UI lists in its Engine combobox. */
export interface EngineInfo {
  id: string;
  label: string;
  description: string;
}
