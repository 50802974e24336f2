/**
 * A model made from its model library: a compiled WebLLM library carries its
 * own metadata (every parameter's name, shape and dtype), so weights that fit
 * it can be generated instead of downloaded. The weights are made up but keep
 * every activation far inside half precision's range (f16-safe.ts) — random
 * 4-bit codes, scales chosen per kind of weight from the library's shapes,
 * norm weights of 1, biases of 0 — so the real kernels run at their real
 * shapes, write nonsense, and give finite logits on any correct GPU,
 * q4f16 libraries included. The GPU benchmark measures WebLLM with them, and the
 * real-kernel tests load them; everything is generated deterministically, so
 * nothing needs storing or downloading.
 */

import { f16SafeScales, halfBits, type MadeUpScales, scaleFor } from './f16-safe';
import { type LibraryMetadata, type LibraryParam, libraryMetadata } from './library-metadata';

/** MLC's converter packs parameters into shards of at most this size; a larger parameter gets a shard of its own. */
export const SHARD_LIMIT = 32 * 1024 * 1024;

const BYTES: Record<string, number> = { uint32: 4, float32: 4, int32: 4, float16: 2 };

function byteSize(p: LibraryParam): number {
  const per = BYTES[p.dtype];
  if (!per) throw new Error(`No made-up values for a ${p.dtype} parameter (${p.name}).`);
  return p.shape.reduce((n, d) => n * d, 1) * per;
}

export interface TensorRecord extends LibraryParam {
  format: 'raw';
  nbytes: number;
  byteOffset: number;
}

export interface ShardRecord {
  dataPath: string;
  format: 'raw-shard';
  nbytes: number;
  records: TensorRecord[];
}

/** The weights index (`ndarray-cache.json` to WebLLM 0.2.79, `tensor-cache.json` to 0.2.86; the same layout). */
export interface WeightsIndex {
  metadata: { ParamSize: number; ParamBytes: number; BitsPerParam: number };
  records: ShardRecord[];
}

/** Parameters packed into shards in their library order, as MLC's converter does. */
export function weightsIndex(meta: LibraryMetadata, limit = SHARD_LIMIT): WeightsIndex {
  const records: ShardRecord[] = [];
  let shard: ShardRecord | undefined;
  let params = 0;
  for (const p of meta.params) {
    const nbytes = byteSize(p);
    params += p.shape.reduce((n, d) => n * d, 1);
    if (!shard || (shard.nbytes > 0 && shard.nbytes + nbytes > limit)) {
      shard = { dataPath: `params_shard_${records.length}.bin`, format: 'raw-shard', nbytes: 0, records: [] };
      records.push(shard);
    }
    shard.records.push({ name: p.name, shape: p.shape, dtype: p.dtype, format: 'raw', nbytes, byteOffset: shard.nbytes });
    shard.nbytes += nbytes;
  }
  const bytes = records.reduce((n, r) => n + r.nbytes, 0);
  return { metadata: { ParamSize: params, ParamBytes: bytes, BitsPerParam: (8 * bytes) / params }, records };
}

/** One shard's bytes: random 4-bit codes, the scales given per kind of weight, norm weights of 1, biases of 0; the same bytes every time. */
export function shardBytes(shard: ShardRecord, seed: number, scales: MadeUpScales): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(shard.nbytes);
  const words = new Uint32Array(out.buffer, 0, out.byteLength >>> 2);
  const floats = new Float32Array(out.buffer, 0, out.byteLength >>> 2);
  const halves = new Uint16Array(out.buffer, 0, out.byteLength >>> 1);
  let x = (seed * 2654435761 + 1) >>> 0 || 1;
  for (const r of shard.records) {
    const fill = (value: number) => {
      if (r.dtype === 'float32') floats.fill(value, r.byteOffset / 4, (r.byteOffset + r.nbytes) / 4);
      else if (r.dtype === 'float16') halves.fill(halfBits(value), r.byteOffset / 2, (r.byteOffset + r.nbytes) / 2);
      else throw new Error(`No made-up values for ${r.name} (${r.dtype}).`);
    };
    if (r.dtype === 'uint32' && r.name.endsWith('q_weight')) {
      for (let i = r.byteOffset / 4, to = i + r.nbytes / 4; i < to; i++) {
        // xorshift32: cheap, and the same codes on every run
        x ^= x << 13;
        x ^= x >>> 17;
        x ^= x << 5;
        words[i] = x >>> 0;
      }
    } else if (r.name.endsWith('q_scale')) fill(scaleFor(r.name, scales));
    else if (/norm\.weight$/.test(r.name)) fill(1);
    else if (r.name.endsWith('bias')) fill(0);
    else throw new Error(`No made-up values for ${r.name} (${r.dtype}).`);
  }
  return out;
}

/** Qwen2's vocabulary, which every Qwen2/Qwen2.5 library's embedding has. */
const QWEN_VOCAB = 151_936;

export interface ChatConfigOptions {
  /**
   * Every token id divisible by this ends a reply, as the end-of-text token
   * does: for a whole read on a software GPU, where each written token takes
   * seconds. Absent, replies run to their cap (gibberish rarely ends itself).
   * Made-up weights write nearly the same tokens whatever the prompt, so
   * where a reply ends is fixed by the weights, not by chance.
   */
  stopEvery?: number;
  /**
   * The conversation template: WebLLM's qwen2 (ChatML, the default), or a
   * bare one that adds nothing around the messages' text, for tests on a
   * software GPU where each prompt token takes seconds (ChatML's markers are
   * 13 tokens around a message).
   */
  template?: 'qwen2' | 'bare';
}

/** WebLLM's qwen2 conversation template (ChatML), as MLC writes it into mlc-chat-config.json. */
export function qwenConvTemplate(stopTokenIds: number[] = [151643, 151645]) {
  return {
    name: 'qwen2',
    system_template: '<|im_start|>system\n{system_message}<|im_end|>\n',
    system_message: 'You are a helpful assistant.',
    system_prefix_token_ids: null,
    add_role_after_system_message: true,
    roles: { user: '<|im_start|>user', assistant: '<|im_start|>assistant' },
    role_templates: { user: '{user_message}', assistant: '{assistant_message}', tool: '{tool_message}' },
    messages: [],
    seps: ['<|im_end|>\n'],
    role_content_sep: '\n',
    role_empty_sep: '\n',
    stop_str: ['<|endoftext|>', '<|im_end|>'],
    stop_token_ids: stopTokenIds,
    function_string: '',
    use_function_calling: false,
  };
}

/** A conversation template with no markers: a prompt is its messages' text alone. */
export function bareConvTemplate(stopTokenIds: number[]) {
  return {
    ...qwenConvTemplate(stopTokenIds),
    name: 'bare',
    system_template: '{system_message}',
    system_message: '',
    roles: { user: '', assistant: '' },
    // WebLLM needs at least one separator, which may be empty.
    seps: [''],
    role_content_sep: '',
    role_empty_sep: '',
  };
}

/**
 * mlc-chat-config.json as MLC writes it for a Qwen2.5 Instruct model: the
 * library's own architecture and quantisation, Qwen's 32K context (which a
 * load overrides), WebLLM's qwen2 conversation template and the model's
 * generation defaults.
 */
export function chatConfig(meta: LibraryMetadata, options: ChatConfigOptions = {}) {
  const kv = meta.kv_cache as { num_hidden_layers: number; num_attention_heads: number; num_key_value_heads: number; head_dim: number } | undefined;
  const ends = [151643, 151645];
  const stops = [...ends];
  const every = options.stopEvery;
  if (every !== undefined) {
    if (!Number.isInteger(every) || every < 2) throw new Error('stopEvery must be a whole number of at least 2.');
    for (let id = every; id < QWEN_VOCAB; id += every) if (!ends.includes(id)) stops.push(id);
  }
  return {
    version: '0.1.0',
    model_type: meta.model_type,
    quantization: meta.quantization,
    model_config: {
      hidden_size: kv ? kv.num_attention_heads * kv.head_dim : undefined,
      num_hidden_layers: kv?.num_hidden_layers,
      num_attention_heads: kv?.num_attention_heads,
      num_key_value_heads: kv?.num_key_value_heads,
      head_dim: kv?.head_dim,
      vocab_size: QWEN_VOCAB,
      tie_word_embeddings: true,
      context_window_size: 32768,
      prefill_chunk_size: meta.prefill_chunk_size,
    },
    vocab_size: QWEN_VOCAB,
    context_window_size: 32768,
    sliding_window_size: meta.sliding_window_size,
    prefill_chunk_size: meta.prefill_chunk_size,
    attention_sink_size: meta.attention_sink_size,
    tensor_parallel_shards: 1,
    temperature: 0.7,
    presence_penalty: 0,
    frequency_penalty: 0,
    repetition_penalty: 1.05,
    top_p: 0.8,
    tokenizer_files: ['tokenizer.json', 'vocab.json', 'merges.txt', 'tokenizer_config.json'],
    tokenizer_info: { token_postproc_method: 'byte_level', prepend_space_in_encode: false, strip_space_in_decode: false },
    conv_template: options.template === 'bare' ? bareConvTemplate(stops) : qwenConvTemplate(stops),
    pad_token_id: 151643,
    bos_token_id: 151643,
    eos_token_id: [151645, 151643],
  };
}

/** The files of a made-up model, by their path under the model's base URL (`resolve/main/`). */
export interface MadeUpModel {
  meta: LibraryMetadata;
  /** The scales of its quantised weights (f16-safe.ts). */
  scales: MadeUpScales;
  index: WeightsIndex;
  /** The bytes of one file, made on request; undefined for a file the model does not have. */
  file(path: string): Uint8Array<ArrayBuffer> | undefined;
}

/**
 * Every file WebLLM and the app read for a model, from its library and
 * Qwen's tokenizer: mlc-chat-config.json, tokenizer.json,
 * tokenizer_config.json (when given), the weights index under both names,
 * and the shards.
 */
export function madeUpModel(
  library: Uint8Array,
  tokenizer: { json: Uint8Array<ArrayBuffer>; config?: Uint8Array<ArrayBuffer> },
  options: ChatConfigOptions = {},
): MadeUpModel {
  const meta = libraryMetadata(library);
  const index = weightsIndex(meta);
  const json = (v: unknown) => new TextEncoder().encode(JSON.stringify(v));
  const config = json(chatConfig(meta, options));
  const indexBytes = json(index);
  const scales = f16SafeScales(meta);
  return {
    meta,
    scales,
    index,
    file(path) {
      if (path === 'mlc-chat-config.json') return config;
      if (path === 'tokenizer.json') return tokenizer.json;
      if (path === 'tokenizer_config.json') return tokenizer.config;
      if (path === 'ndarray-cache.json' || path === 'tensor-cache.json') return indexBytes;
      const i = Number(/^params_shard_(\d+)\.bin$/.exec(path)?.[1] ?? NaN);
      const shard = index.records[i];
      return shard && shard.dataPath === path ? shardBytes(shard, i, scales) : undefined;
    },
  };
}
