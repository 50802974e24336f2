// The speed record's shape is a core type (engines measure it, estimates read it); this store keeps it.
export type { SpeedRecord } from '../core/estimate';

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
