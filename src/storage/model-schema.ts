import type { SpeedMeasurement } from '../core/estimate';

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
 * A model's speed measured on one device apart from any read (a WebLLM model
 * when it is loaded in Models, a llama.cpp model by its measure button): the
 * one record every engine keeps its measured speed in, for estimates made
 * before any read.
 */
export interface SpeedRecord extends SpeedMeasurement {
  /** The model, as `modelKey` names it from the engine config a read would use. */
  modelId: string;
  /**
   * Where it was measured: the GPU as WebGPU names it (vendor and
   * architecture), or the processor and thread count for a CPU engine.
   * Another device measures again.
   */
  adapter: string;
  measuredAt: number;
}
