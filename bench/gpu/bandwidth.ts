/**
 * How fast decoding could be at most on a device: writing one token reads
 * every weight once, and the KV cache of the context so far, so memory
 * bandwidth caps tokens per second. WebGPU reports no bandwidth; the device's
 * name (which the adapter does report) is looked up among the makers'
 * published figures below, or the figure is given with --bandwidth-gbps.
 */
import type { LibraryMetadata } from '../../src/engines/webllm/models/library-metadata';

/** Published peak memory bandwidth, GB/s (10^9 bytes), by a pattern of the device's name. */
const KNOWN: readonly [RegExp, string, number][] = [
  [/\bH200\b/i, 'NVIDIA H200', 4800],
  [/\bH100\b.*\bPCIe\b/i, 'NVIDIA H100 PCIe', 2000],
  [/\bH100\b/i, 'NVIDIA H100 SXM', 3350],
  [/\bA100\b.*\b80\s?GB\b/i, 'NVIDIA A100 80GB', 2039],
  [/\bA100\b/i, 'NVIDIA A100 40GB', 1555],
  [/\bL40S\b/i, 'NVIDIA L40S', 864],
  [/\bL4\b/i, 'NVIDIA L4', 300],
  [/\bA10G?\b/i, 'NVIDIA A10', 600],
  [/\bT4\b/i, 'NVIDIA T4', 320],
  [/RTX\s?4090/i, 'NVIDIA GeForce RTX 4090', 1008],
  [/RTX\s?3090/i, 'NVIDIA GeForce RTX 3090', 936],
];

export interface Bandwidth {
  gbPerSecond: number;
  /** Where the figure comes from: the flag, or the published figure of the device named. */
  source: string;
}

/** The bandwidth of the device `name` names (its adapter's description or device string), or the one given. */
export function deviceBandwidth(name: string, given?: number): Bandwidth | undefined {
  if (given !== undefined) return { gbPerSecond: given, source: '--bandwidth-gbps' };
  for (const [pattern, device, gbPerSecond] of KNOWN) if (pattern.test(name)) return { gbPerSecond, source: `published figure for the ${device}` };
  return undefined;
}

const DTYPE_BYTES: Record<string, number> = { float32: 4, float16: 2 };

/** Bytes one decode step must read: every parameter, and the KV cache of `contextTokens` tokens. */
export function bytesPerDecodeStep(meta: LibraryMetadata, contextTokens: number): { weights: number; kv: number } {
  const weights = meta.params.reduce((n, p) => n + p.shape.reduce((a, d) => a * d, 1) * (p.dtype === 'float16' ? 2 : 4), 0);
  const kv = meta.kv_cache as { num_hidden_layers: number; num_key_value_heads: number; head_dim: number } | undefined;
  // The KV cache holds activations in the model's float type: f16 for q4f16_1, f32 for q4f32_1.
  const activation = DTYPE_BYTES[/f16/.test(meta.quantization) ? 'float16' : 'float32']!;
  const perToken = kv ? kv.num_hidden_layers * 2 * kv.num_key_value_heads * kv.head_dim * activation : 0;
  return { weights, kv: perToken * contextTokens };
}

/** The most decode steps per second `bandwidth` allows for this model at this context. */
export function decodeLimit(meta: LibraryMetadata, contextTokens: number, bandwidth: Bandwidth): number {
  const { weights, kv } = bytesPerDecodeStep(meta, contextTokens);
  return (bandwidth.gbPerSecond * 1e9) / (weights + kv);
}
