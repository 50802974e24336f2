import type { EngineEntry } from '../entry';
import { loadQwenTokenizer } from '../qwen-tokenizer';
import { ExtractiveEngine } from './engine';
import { EXTRACTIVE_INFO } from './info';

/** The extractive engine: no model, Qwen's vocabulary for chunking. */
export const EXTRACTIVE: EngineEntry = {
  info: EXTRACTIVE_INFO,
  create: async () => new ExtractiveEngine(await loadQwenTokenizer()),
  tokenizer: () => loadQwenTokenizer(),
};
