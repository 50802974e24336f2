import type { EngineInfo } from '../engine';

export const OPENAI_INFO: EngineInfo = {
  id: 'openai',
  label: 'OpenAI-compatible server',
  description: 'A model served over HTTP by vLLM, SGLang, llama.cpp or Ollama, on this machine or another. Enter its address and press Connect.',
  needsModel: true,
  // Qwen's vocabulary; the engine measures the server's own counts against it when it connects.
  standaloneTokenizer: true,
};

/**
 * How many requests the questions of one read have at a server at once (the
 * rest wait their turn). 4 by default: llama.cpp's server and Ollama commonly
 * serve a handful of requests together, so more would only queue there while
 * holding their connections; vLLM and SGLang batch far more, so a person may
 * raise it. At most 64: more questions than that are not read together on a
 * form, and few servers hold that many long steps in their cache at once.
 */
export const REQUESTS_AT_ONCE = { default: 4, min: 1, max: 64 } as const;

/** Whether `n` can bound the requests in flight: a whole number from REQUESTS_AT_ONCE.min to .max. */
export function isRequestsAtOnce(n: unknown): n is number {
  return typeof n === 'number' && Number.isInteger(n) && n >= REQUESTS_AT_ONCE.min && n <= REQUESTS_AT_ONCE.max;
}
