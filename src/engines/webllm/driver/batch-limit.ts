/**
 * How many questions' requests one batch holds on this device: each needs a
 * sequence of the step's tokens in the batch's KV cache, and that cache must
 * fit both the memory set aside for it and the GPU's largest buffer (the
 * paged cache keeps each layer's pages in one buffer).
 */
import type { BatchLimit } from '../../engine';

/** More questions than this in one pass gain little and hold every one of them up to the slowest. */
export const MAX_BATCH = 8;
/** The floor of the KV budget where the weights' size is unknown or small. */
export const MIN_KV_BUDGET = 1024 ** 3;
/** WebLLM's page size: a sequence's entries are taken a page at a time. */
const PAGE = 16;

/** What decides a batch's size on a device. */
export interface BatchShape {
  /** Layers of the model (each keeps its own pages in one buffer). */
  layers: number;
  /** KV cache bytes per token over all layers: layers × KV heads × head size × 2 (keys and values) × bytes a number. */
  kvBytesPerToken: number;
  /** The weights' bytes on the GPU, where known. */
  weightsBytes?: number;
  /** The adapter's largest buffer and largest storage binding, where known. */
  maxBufferSize?: number;
  maxStorageBufferBindingSize?: number;
  /** Why this model cannot write a batch (its library has no batched kernels), where known. */
  blocker?: string;
  /** Tokens of WebLLM's own KV cache (the loaded window), which takes its part of the same memory. */
  ownCacheTokens?: number;
}

/** The fields of mlc-chat-config.json's `model_config` the KV size is read from. */
export interface KvConfigLike {
  num_hidden_layers?: number;
  num_key_value_heads?: number;
  num_attention_heads?: number;
  head_dim?: number;
  hidden_size?: number;
}

/**
 * Layers and KV bytes per token from a model config; keys and values are
 * kept in 32-bit floats by the q4f32 libraries, 16-bit by the f16 ones.
 * Undefined where the config lacks the sizes.
 */
export function kvShape(config: KvConfigLike | undefined, quantization: string | undefined): Pick<BatchShape, 'layers' | 'kvBytesPerToken'> | undefined {
  const layers = config?.num_hidden_layers;
  const heads = config?.num_key_value_heads ?? config?.num_attention_heads;
  const headDim = config?.head_dim ?? (config?.hidden_size && config.num_attention_heads ? config.hidden_size / config.num_attention_heads : undefined);
  if (!layers || !heads || !headDim) return undefined;
  const bytes = /f32/.test(quantization ?? '') ? 4 : 2;
  return { layers, kvBytesPerToken: layers * heads * headDim * 2 * bytes };
}

function size(bytes: number): string {
  const gib = bytes / 1024 ** 3;
  return gib >= 1 ? `${gib.toFixed(gib >= 10 ? 0 : 1)} GiB` : `${Math.round(bytes / 1024 ** 2)} MiB`;
}

/**
 * The batch size for requests of `contextTokens` tokens each (prompt and
 * reply), and why. The memory budget is as much again as the weights take
 * (at least MIN_KV_BUDGET): WebGPU tells no page how much memory the GPU
 * has, and a device that holds the weights has held that much. WebLLM's own
 * cache, kept beside the batch's, takes its part first; the buffer limit is
 * the adapter's own.
 */
export function batchLimitFor(shape: BatchShape, contextTokens: number): BatchLimit {
  if (shape.blocker) return { size: 1, reason: `Questions are written in turns: ${shape.blocker}.` };
  const tokens = Math.ceil((contextTokens + 1) / PAGE) * PAGE;
  const perSequence = tokens * shape.kvBytesPerToken;
  const budget = Math.max(MIN_KV_BUDGET, shape.weightsBytes ?? 0);
  const own = (shape.ownCacheTokens ?? 0) * shape.kvBytesPerToken;
  const byMemory = Math.floor(Math.max(0, budget - own) / perSequence);
  const buffer = Math.min(shape.maxBufferSize ?? Infinity, shape.maxStorageBufferBindingSize ?? Infinity);
  const byBuffer = Math.floor(buffer / (perSequence / shape.layers));
  const n = Math.max(1, Math.min(MAX_BATCH, byMemory, byBuffer));
  const many = (k: number) => (k === 1 ? 'One question' : `${k} questions`);
  const fit = n === 1 ? 'fits' : 'fit';
  const of = `of ${contextTokens.toLocaleString('en-US')} tokens`;
  let reason: string;
  if (Math.min(byMemory, byBuffer) < 1)
    reason = `Questions ${of} are written one at a time: one takes ${size(perSequence)} of KV cache, more than this GPU's batch can hold`;
  else if (n === MAX_BATCH && byMemory >= MAX_BATCH && byBuffer >= MAX_BATCH)
    reason = `${MAX_BATCH} questions ${of} at most in one batch (the most that gain from it)`;
  else if (byBuffer < byMemory) reason = `${many(n)} ${of} ${fit} this GPU's largest buffer (${size(buffer)} for each layer's keys and values)`;
  else {
    const beside = own > 0 ? `, less ${size(own)} for WebLLM's own cache` : '';
    reason = `${many(n)} ${of} ${fit} the ${size(budget)} KV budget of this GPU${beside} (${Math.round(shape.kvBytesPerToken / 1024)} KiB a token)`;
  }
  return { size: n, reason: `${reason}.` };
}
