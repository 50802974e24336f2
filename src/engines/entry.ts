import type { Tokenizer } from '../core/tokenizer';
import type { Engine, EngineConfig, EngineInfo } from './engine';
import type { OpenAIOptions } from './openai/engine';
import type { ApiKeySource } from './openai/http';
import type { SpeedShelf } from './speed-shelf';

/** What an engine may need beyond its stored config: a key looked up when it runs (never stored on a run), how to retry. */
export interface EngineOptions extends OpenAIOptions {
  apiKey?: ApiKeySource;
  /** Where an engine keeps what it checks on this device (WebLLM: the speculation self-check's verdict). */
  speeds?: SpeedShelf;
}

/**
 * One entry per runtime, each written in its engine's folder (`entry.ts`). A
 * new engine adds its folder and one line to the table below; heavy runtimes
 * are imported inside `create`, so they load only when used.
 */
export interface EngineEntry {
  info: EngineInfo;
  create(config?: EngineConfig, options?: EngineOptions): Promise<Engine>;
  /** The tokenizer runs on this engine are chunked with. */
  tokenizer(config?: EngineConfig): Promise<Tokenizer>;
}
