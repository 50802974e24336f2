import type { Tokenizer } from '../core/tokenizer';
import type { Engine, EngineConfig, EngineInfo } from './engine';
import { EXTRACTIVE_INFO, ExtractiveEngine } from './extractive/engine';
import { type ApiKeySource, checkServer as checkOpenAIServer, createOpenAIEngine, OPENAI_INFO, type OpenAIOptions, openAIConfig, type ServerCheck } from './openai/engine';
import { loadQwenTokenizer } from './qwen-tokenizer';
import { WEBLLM_INFO } from './webllm/models';
import { WLLAMA_INFO } from './wllama/models';

/** What an engine may need beyond its stored config: a key looked up when it runs (never stored on a run), how to retry. */
export interface EngineOptions extends OpenAIOptions {
  apiKey?: ApiKeySource;
}

/**
 * One entry per runtime. A new engine adds an entry here and its own file;
 * heavy runtimes are imported inside `create`, so they load only when used.
 */
interface EngineEntry {
  info: EngineInfo;
  create(config?: EngineConfig, options?: EngineOptions): Promise<Engine>;
  /** The tokenizer runs on this engine are chunked with. */
  tokenizer(config?: EngineConfig): Promise<Tokenizer>;
}

const ENTRIES: readonly EngineEntry[] = [
  {
    info: EXTRACTIVE_INFO,
    create: async () => new ExtractiveEngine(await loadQwenTokenizer()),
    tokenizer: () => loadQwenTokenizer(),
  },
  {
    info: OPENAI_INFO,
    create: async (config, options = {}) => createOpenAIEngine(openAIConfig(config, options.apiKey), await loadQwenTokenizer(), options),
    // Qwen's vocabulary; the engine measures the server's own counts against it when it connects.
    tokenizer: () => loadQwenTokenizer(),
  },
  {
    info: WEBLLM_INFO,
    // WebLLM's 6.8 MB bundle loads only here, in the worker, once a WebLLM run needs it.
    create: async (config) => (await import('./webllm/engine')).createWebLLMEngine(config),
    // The model's own tokenizer.json, from WebLLM's cache (fetched into it if missing).
    tokenizer: async (config) => (await import('./webllm/engine')).webllmTokenizer(config),
  },
  {
    info: WLLAMA_INFO,
    // llama.cpp's glue and its 10 MB wasm load only here, in the worker, once a llama.cpp run needs them.
    create: async (config) => (await import('./wllama/engine')).createWllamaEngine(config),
    // Qwen's vocabulary: exact for the suggested Qwen GGUFs; for others the engine plans with a margin and checks each prompt.
    tokenizer: () => loadQwenTokenizer(),
  },
];

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
