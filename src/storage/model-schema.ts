/**
 * A model the person added by URL (a converted RL-MemAgent-7B, say): what
 * WebLLM needs to fetch and load it. Stored so that it stays in the Models list.
 */
export interface CustomModelRecord {
  id: string;
  label: string;
  /** Where mlc-chat-config.json, tokenizer.json, tensor-cache.json and the shards are. */
  modelUrl: string;
  /** The compiled model library (.wasm). */
  libUrl: string;
  /** The longest context the model takes, in tokens. */
  contextLimit: number;
  addedAt: number;
}

/**
 * A WebLLM model's speed measured on one GPU right after it was loaded: a few
 * seconds, once per model and GPU, for estimates made before any read.
 */
export interface CalibrationRecord {
  modelId: string;
  /** The GPU as WebGPU names it (vendor and architecture): another GPU measures again. */
  adapter: string;
  prefillTokensPerSecond: number;
  decodeTokensPerSecond: number;
  promptTokens: number;
  completionTokens: number;
  /** WebLLM's own figures, or the stream timed where it gave none. */
  source: 'reported' | 'timed';
  measuredAt: number;
}
