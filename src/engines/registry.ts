import type { Tokenizer } from '../core/tokenizer';
import type { Engine, EngineConfig, EngineInfo } from './engine';
import { EXTRACTIVE } from './extractive/entry';
import { type ApiKeySource, checkServer as checkOpenAIServer, type OpenAIOptions, openAIConfig, type ServerCheck } from './openai/engine';
import { OPENAI } from './openai/entry';
import { loadQwenTokenizer } from './qwen-tokenizer';
import { WEBLLM } from './webllm/entry';
import { WLLAMA } from './wllama/entry';

/** What an engine may need beyond its stored config: a key looked up when it runs (never stored on a run), how to retry. */
export interface EngineOptions extends OpenAIOptions {
  apiKey?: ApiKeySource;
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

// The order the Engine combobox lists them in.
const ENTRIES: readonly EngineEntry[] = [EXTRACTIVE, OPENAI, WEBLLM, WLLAMA];

/** Every engine the app offers, in the order the Engine combobox lists them. */
export const ENGINES: readonly EngineInfo[] = ENTRIES.map((e) => e.info);

function entry(engineId: string): EngineEntry {
  const found = ENTRIES.find((e) => e.info.id === engineId);
  if (!found) throw new Error(`Unknown engine "${engineId}". Choose one of: ${ENGINES.map((e) => e.label).join(', ')}.`);
  return found;
}

export function createEngine(engineId: string, config?: EngineConfig, options?: EngineOptions): Promise<Engine> {
  return entry(engineId).create(config, options);
}

/** Connects to an OpenAI-compatible server without reading: its models, context window and how it counts tokens. */
export async function checkServer(config: EngineConfig, options: EngineOptions = {}): Promise<ServerCheck> {
  return checkOpenAIServer(openAIConfig(config, options.apiKey), await loadQwenTokenizer(), options);
}

export function tokenizerFor(engineId: string, config?: EngineConfig): Promise<Tokenizer> {
  return entry(engineId).tokenizer(config);
}
