import type { Tokenizer } from '../core/tokenizer';
import type { Engine, EngineConfig } from './engine';
import { ENGINES } from './infos';
import { EXTRACTIVE } from './extractive/entry';
import type { EngineEntry, EngineOptions } from './entry';
import { checkServer as checkOpenAIServer, type ServerCheck } from './openai/engine';
import { openAIConfig } from './openai/http';
import { OPENAI } from './openai/entry';
import { loadQwenTokenizer } from './qwen-tokenizer';
import { WEBLLM } from './webllm/entry';
import { WLLAMA } from './wllama/entry';

export type { EngineEntry, EngineOptions };

// One entry per engine of ENGINES (infos.ts), in the same order: test/engine-registry.test.ts holds them together.
export const ENTRIES: readonly EngineEntry[] = [EXTRACTIVE, OPENAI, WEBLLM, WLLAMA];

export { ENGINES };

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
