import type { EngineEntry } from '../entry';
import { loadQwenTokenizer } from '../qwen-tokenizer';
import { WLLAMA_INFO } from './models';

/** llama.cpp compiled to WebAssembly, on the processor. */
export const WLLAMA: EngineEntry = {
  info: WLLAMA_INFO,
  // llama.cpp's glue and its 10 MB wasm load only here, in the worker, once a llama.cpp run needs them.
  create: async (config) => (await import('./engine')).createWllamaEngine(config),
  // Qwen's vocabulary: exact for the suggested Qwen GGUFs; for others the engine plans with a margin and checks each prompt.
  tokenizer: () => loadQwenTokenizer(),
};
