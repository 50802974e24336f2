import type { EngineEntry } from '../entry';
import { WEBLLM_INFO } from './models/models';

/** WebLLM on this GPU. */
export const WEBLLM: EngineEntry = {
  info: WEBLLM_INFO,
  // WebLLM's 6.8 MB bundle loads only here, in the worker, once a WebLLM run needs it.
  create: async (config, options) => (await import('./engine')).createWebLLMEngine(config, undefined, options?.speeds),
  // The model's own tokenizer.json, from WebLLM's cache (fetched into it if missing).
  tokenizer: async (config) => (await import('./resolve')).webllmTokenizer(config),
};
