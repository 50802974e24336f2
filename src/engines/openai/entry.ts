import type { EngineEntry } from '../entry';
import { loadQwenTokenizer } from '../qwen-tokenizer';
import { createOpenAIEngine } from './engine';
import { OPENAI_INFO } from './info';
import { openAIConfig } from './http';

/** An OpenAI-compatible server, with the key looked up when it runs. */
export const OPENAI: EngineEntry = {
  info: OPENAI_INFO,
  create: async (config, options = {}) => createOpenAIEngine(openAIConfig(config, options.apiKey), await loadQwenTokenizer(), options),
  // Qwen's vocabulary; the engine measures the server's own counts against it when it connects.
  tokenizer: () => loadQwenTokenizer(),
};
