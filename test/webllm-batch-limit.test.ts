import { describe, expect, it } from 'vitest';
import { batchLimitFor, kvShape, MAX_BATCH } from '../src/engines/webllm/driver/batch-limit';

const MiB = 1024 ** 2;
/** Qwen2.5-7B's shape as the q4f32_1 library keeps it: 28 layers, 4 KV heads of 128. */
const QWEN_7B = kvShape({ num_hidden_layers: 28, num_key_value_heads: 4, head_dim: 128 }, 'q4f32_1')!;
/** Qwen2.5-0.5B: 24 layers, 2 KV heads of 64 (head size from hidden size / heads). */
const QWEN_05B = kvShape({ num_hidden_layers: 24, num_key_value_heads: 2, num_attention_heads: 14, hidden_size: 896 }, 'q4f32_1')!;

describe('how many questions one batch holds on a device', () => {
  it('reads the KV bytes per token from the model config: layers × KV heads × head size × 2 × bytes a number', () => {
    expect(QWEN_7B).toEqual({ layers: 28, kvBytesPerToken: 112 * 1024 });
    expect(QWEN_05B).toEqual({ layers: 24, kvBytesPerToken: 24 * 1024 });
    expect(kvShape({ num_hidden_layers: 28, num_key_value_heads: 4, head_dim: 128 }, 'q4f16_1')?.kvBytesPerToken).toBe(56 * 1024);
    expect(kvShape({ num_hidden_layers: 28 }, 'q4f32_1')).toBeUndefined();
  });

  it('fits as many sequences of the step as the weights’ size again holds, in pages of 16 tokens', () => {
    // 8,192 tokens × 112 KiB = 896 MiB a sequence; 4,540 MiB of weights hold five.
    const limit = batchLimitFor({ ...QWEN_7B, weightsBytes: 4540 * MiB, maxBufferSize: 2 * 1024 * MiB }, 8191);
    expect(limit).toEqual({ size: 5, reason: '5 questions of 8,191 tokens fit the 4.4 GiB KV budget of this GPU (112 KiB a token).' });
    // Small weights: the 1 GiB floor; 9,216 tokens × 24 KiB = 216 MiB a sequence, four in 1 GiB.
    expect(batchLimitFor({ ...QWEN_05B, weightsBytes: 309 * MiB, maxBufferSize: 256 * MiB }, 9215).size).toBe(4);
  });

  it('counts WebLLM’s own KV cache, beside the batch’s, in the budget', () => {
    // 896 MiB a sequence of 8,192 tokens: 4,540 MiB of weights hold five alone, three beside a cache of a 9,216-token window (1,008 MiB).
    const limit = batchLimitFor({ ...QWEN_7B, weightsBytes: 4540 * MiB, ownCacheTokens: 9216 }, 8191);
    expect(limit).toEqual({
      size: 3,
      reason: "3 questions of 8,191 tokens fit the 4.4 GiB KV budget of this GPU, less 1008 MiB for WebLLM's own cache (112 KiB a token).",
    });
  });

  it('holds no more than one buffer of the adapter takes for a layer’s keys and values', () => {
    // 32 MiB a layer per sequence at 8,192 tokens: a 64 MiB buffer holds two.
    const limit = batchLimitFor({ ...QWEN_7B, weightsBytes: 4540 * MiB, maxBufferSize: 64 * MiB }, 8191);
    expect(limit).toEqual({ size: 2, reason: "2 questions of 8,191 tokens fit this GPU's largest buffer (64 MiB for each layer's keys and values)." });
    expect(batchLimitFor({ ...QWEN_7B, maxBufferSize: 256 * MiB, maxStorageBufferBindingSize: 16 * MiB }, 8191).size).toBe(1);
  });

  it('caps the batch at eight and says so; a model that cannot batch writes in turns', () => {
    expect(batchLimitFor({ ...QWEN_05B }, 1023)).toEqual({
      size: MAX_BATCH,
      reason: '8 questions of 1,023 tokens at most in one batch (the most that gain from it).',
    });
    expect(batchLimitFor({ ...QWEN_7B, blocker: 'the model library has no batch_prefill and batch_decode' }, 8191)).toEqual({
      size: 1,
      reason: 'Questions are written in turns: the model library has no batch_prefill and batch_decode.',
    });
    expect(batchLimitFor({ ...QWEN_7B }, 100_000)).toEqual({
      size: 1,
      reason: "Questions of 100,000 tokens are written one at a time: one takes 11 GiB of KV cache, more than this GPU's batch can hold.",
    });
  });
});
