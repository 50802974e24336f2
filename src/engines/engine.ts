import type { BatchRequest } from '../core/batch';
import type { GenerateResult, TextGenerator } from '../core/generation';
import type { RawCompleter } from '../core/infmem/thinking';
import type { Tokenizer } from '../core/tokenizer';

/** One runtime that can read: a model (or a heuristic) behind the loop's generate call. */
export interface Engine extends TextGenerator {
  readonly id: string;
  /** Tokens one request may hold, prompt and reply together. */
  readonly contextWindow: number;
  readonly tokenizer: Tokenizer;
  /**
   * Serves several requests at once (a model server batches them): runs on it
   * read concurrently. Absent: one request at a time (a model on this device),
   * so runs on it take turns, a step each.
   */
  readonly parallel?: boolean;
  /**
   * For a parallel engine: the most requests it has in flight at once while
   * several questions are read together (a setting of its connection); the
   * others wait their turn. Absent: no bound.
   */
  readonly requestsAtOnce?: number;
  /**
   * For engines whose window is set at load (WebLLM): load with room for
   * `contextTokens`, the run's planned step, before its first request.
   */
  prepare?(contextTokens: number, signal?: AbortSignal): Promise<void>;
  /**
   * Writes several questions' requests of one step in one batch (several
   * sequences in the same forward passes), each settled on its own. Absent:
   * a step's requests take turns (or, on a parallel engine, are in flight together).
   */
  generateBatch?(requests: readonly BatchRequest[]): Promise<PromiseSettledResult<GenerateResult>[]>;
  /** How many requests of `contextTokens` tokens each one batch holds on this device, and why that many. */
  batchLimit?(contextTokens: number): Promise<BatchLimit>;
  /** After a DeviceLostError: free what is left so the next request loads afresh; `attempt` counts losses in a row. */
  recover?(attempt: number): Promise<void>;
  /**
   * Continues a prompt exactly as given (a raw completion), for a method that
   * renders its own chat text (InfMem). Absent: the engine takes chat messages only.
   */
  readonly completer?: RawCompleter;
}

/**
 * Engine-specific choices that a run stores so that a resume recreates the same
 * engine (a model id, a server URL). Never secrets: runs are exported.
 */
export type EngineConfig = Readonly<Record<string, string | number | boolean>>;

/** A config with anything that looks like a credential left out: what may be stored on a run. */
export function withoutSecrets(config: EngineConfig | undefined): EngineConfig | undefined {
  if (!config) return undefined;
  return Object.fromEntries(Object.entries(config).filter(([name]) => !/api_?key|secret|password|credential|bearer|access_?token|authorization/i.test(name)));
}

/** What the UI lists in its Engine combobox, and what an engine can do, said once for the UI, the runs and the CLI. */
export interface EngineInfo {
  id: string;
  label: string;
  description: string;
  /** Reads with a language model; false for the model-free engine, which reads no prompts and has no model to choose. */
  needsModel: boolean;
  /** Chunks with a tokenizer that needs no model or server (Qwen's vocabulary, bundled), so a book can be counted with it before any model is chosen. */
  standaloneTokenizer: boolean;
}

/** How many questions' requests go together in one batch, and what decided it (shown on the Read form). */
export interface BatchLimit {
  size: number;
  reason: string;
}
