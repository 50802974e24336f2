/**
 * A made-up Qwen2 model as a GGUF file for llama.cpp, at the shapes of the
 * WebLLM model library being measured, so that the two runtimes do the same
 * arithmetic: the same layers, hidden size, heads, KV heads, feed-forward
 * size and vocabulary, at 4 bits (Q4_0). Qwen's own tokenizer goes in, since
 * llama.cpp will not load a model without one.
 *
 * The weights are random 4-bit codes with one small scale: every weight is at
 * most 8 × 0.002 = 0.016 in size. After an RMS norm each activation is about
 * 1, so a projection of n inputs gives values of about √n × 4.6 × 0.002 (0.55
 * for the 7B's 3,584), and the residual stream grows by about that per layer:
 * far inside f16's range through every layer, so an f16 path cannot overflow.
 */
import type { LibraryMetadata } from '../../../src/engines/webllm/models/library-metadata';
import { GgmlType, type GgufTensor, type GgufValue, gguf, tensorBytes, writeGguf } from './gguf-writer';

export interface Qwen2Shape {
  layers: number;
  hidden: number;
  feedForward: number;
  heads: number;
  kvHeads: number;
  headDim: number;
  vocab: number;
  /** Whether the output projection is the embedding (Qwen2 0.5B and 1.5B) or a tensor of its own (7B). */
  tiedEmbeddings: boolean;
}

/** Qwen2's own settings, which a WebLLM library does not record. */
export const QWEN2_ROPE_BASE = 1_000_000;
export const QWEN2_RMS_EPS = 1e-6;
export const QWEN2_CONTEXT = 32768;
/** The Q4_0 scale of every block (see the file's comment for why it is safe in f16). */
export const WEIGHT_SCALE = 0.002;

/** The shapes a WebLLM model library was compiled for, from its own metadata. */
export function qwen2ShapeOf(meta: LibraryMetadata): Qwen2Shape {
  if (meta.model_type !== 'qwen2') throw new Error(`The peer model is Qwen2; this library is ${meta.model_type}.`);
  const kv = meta.kv_cache as { num_hidden_layers: number; num_attention_heads: number; num_key_value_heads: number; head_dim: number } | undefined;
  if (!kv) throw new Error('This model library records no kv_cache shapes.');
  const param = (suffix: string) => {
    const p = meta.params.find((q) => q.name.endsWith(suffix));
    if (!p) throw new Error(`This model library has no ${suffix} parameter.`);
    return p;
  };
  return {
    layers: kv.num_hidden_layers,
    hidden: param('model.norm.weight').shape[0]!,
    // The gate and up projections are one matrix in MLC's models: twice the feed-forward size.
    feedForward: param('layers.0.mlp.gate_up_proj.q_weight').shape[0]! / 2,
    heads: kv.num_attention_heads,
    kvHeads: kv.num_key_value_heads,
    headDim: kv.head_dim,
    vocab: param('embed_tokens.q_weight').shape[0]!,
    tiedEmbeddings: !meta.params.some((p) => p.name.startsWith('lm_head.')),
  };
}

interface TokenizerJson {
  model: { vocab: Record<string, number>; merges: (string | [string, string])[] };
  added_tokens?: { id: number; content: string; special: boolean }[];
}

/** llama.cpp's token types. */
const TOKEN = { normal: 1, control: 3, userDefined: 4, unused: 5 } as const;

/** Qwen's tokenizer.json as GGUF metadata, padded with unused tokens to the model's vocabulary. */
export function tokenizerMetadata(json: TokenizerJson, vocab: number): Map<string, GgufValue> {
  const tokens: string[] = new Array<string>(vocab);
  const types: number[] = new Array<number>(vocab).fill(TOKEN.unused);
  for (const [text, id] of Object.entries(json.model.vocab)) {
    if (id < vocab) {
      tokens[id] = text;
      types[id] = TOKEN.normal;
    }
  }
  const special = new Map<string, number>();
  for (const t of json.added_tokens ?? []) {
    if (t.id >= vocab) continue;
    tokens[t.id] = t.content;
    // Qwen marks its fill-in-the-middle markers as not special; llama.cpp treats any <|…|> token as control.
    types[t.id] = t.special || /^<\|.*\|>$/.test(t.content) ? TOKEN.control : TOKEN.userDefined;
    special.set(t.content, t.id);
  }
  for (let i = 0; i < vocab; i++) tokens[i] ??= `[PAD${i}]`;
  const endOfText = special.get('<|endoftext|>');
  const endOfTurn = special.get('<|im_end|>') ?? endOfText;
  const m = new Map<string, GgufValue>([
    ['tokenizer.ggml.model', gguf.str('gpt2')],
    ['tokenizer.ggml.pre', gguf.str('qwen2')],
    ['tokenizer.ggml.tokens', gguf.strings(tokens)],
    ['tokenizer.ggml.token_type', gguf.i32s(types)],
    ['tokenizer.ggml.merges', gguf.strings(json.model.merges.map((x) => (typeof x === 'string' ? x : x.join(' '))))],
    ['tokenizer.ggml.add_bos_token', gguf.bool(false)],
  ]);
  if (endOfTurn !== undefined) m.set('tokenizer.ggml.eos_token_id', gguf.u32(endOfTurn));
  if (endOfText !== undefined) {
    m.set('tokenizer.ggml.bos_token_id', gguf.u32(endOfText));
    m.set('tokenizer.ggml.padding_token_id', gguf.u32(endOfText));
  }
  return m;
}

/** The model's hyperparameters under llama.cpp's qwen2 keys. */
export function qwen2Metadata(s: Qwen2Shape, name: string): Map<string, GgufValue> {
  return new Map<string, GgufValue>([
    ['general.architecture', gguf.str('qwen2')],
    ['general.name', gguf.str(name)],
    ['general.file_type', gguf.u32(2)], // mostly Q4_0
    ['qwen2.block_count', gguf.u32(s.layers)],
    ['qwen2.context_length', gguf.u32(QWEN2_CONTEXT)],
    ['qwen2.embedding_length', gguf.u32(s.hidden)],
    ['qwen2.feed_forward_length', gguf.u32(s.feedForward)],
    ['qwen2.attention.head_count', gguf.u32(s.heads)],
    ['qwen2.attention.head_count_kv', gguf.u32(s.kvHeads)],
    ['qwen2.attention.key_length', gguf.u32(s.headDim)],
    ['qwen2.attention.value_length', gguf.u32(s.headDim)],
    ['qwen2.rope.freq_base', gguf.f32(QWEN2_ROPE_BASE)],
    ['qwen2.attention.layer_norm_rms_epsilon', gguf.f32(QWEN2_RMS_EPS)],
  ]);
}

/** A number as IEEE half-precision bits (normal numbers, rounded to nearest). */
export function f16Bits(x: number): number {
  const f = new DataView(new ArrayBuffer(4));
  f.setFloat32(0, x);
  const bits = f.getUint32(0);
  const sign = (bits >>> 16) & 0x8000;
  const exponent = ((bits >>> 23) & 0xff) - 127 + 15;
  if (exponent <= 0 || exponent >= 31) throw new Error(`${x} is not a normal f16 number.`);
  const mantissa = bits & 0x7fffff;
  return (sign | (exponent << 10) | (mantissa >>> 13)) + ((mantissa >>> 12) & 1);
}

/** A run of Q4_0 blocks with the fixed scale and pseudo-random codes, repeated to fill every quantized tensor. */
function q4Pattern(blocks: number, seed: number): Uint8Array {
  const out = new Uint8Array(blocks * 18);
  const scale = f16Bits(WEIGHT_SCALE);
  let x = seed >>> 0 || 1;
  for (let b = 0; b < blocks; b++) {
    out[b * 18] = scale & 0xff;
    out[b * 18 + 1] = scale >>> 8;
    for (let i = 2; i < 18; i++) {
      // xorshift32: enough to keep the codes from being all alike.
      x ^= x << 13;
      x ^= x >>> 17;
      x ^= x << 5;
      out[b * 18 + i] = x & 0xff;
    }
  }
  return out;
}

function repeated(pattern: Uint8Array, total: number): GgufTensor['fill'] {
  return (write) => {
    for (let done = 0; done < total; done += pattern.length) write(pattern.subarray(0, Math.min(pattern.length, total - done)));
  };
}

function constantF32(value: number, count: number): GgufTensor['fill'] {
  return (write) => {
    const a = new Float32Array(count).fill(value);
    write(new Uint8Array(a.buffer));
  };
}

/** Every tensor llama.cpp's qwen2 architecture loads, in a deterministic order. */
export function qwen2Tensors(s: Qwen2Shape): GgufTensor[] {
  const pattern = q4Pattern(1 << 16, 0x9e3779b9);
  const q4 = (name: string, dims: number[]): GgufTensor => ({
    name,
    dims,
    type: GgmlType.Q4_0,
    fill: repeated(pattern, tensorBytes(dims, GgmlType.Q4_0)),
  });
  const f32 = (name: string, n: number, value: number): GgufTensor => ({ name, dims: [n], type: GgmlType.F32, fill: constantF32(value, n) });
  const q = s.heads * s.headDim;
  const kv = s.kvHeads * s.headDim;
  const tensors: GgufTensor[] = [q4('token_embd.weight', [s.hidden, s.vocab])];
  for (let i = 0; i < s.layers; i++) {
    const b = `blk.${i}.`;
    tensors.push(
      f32(`${b}attn_norm.weight`, s.hidden, 1),
      q4(`${b}attn_q.weight`, [s.hidden, q]),
      f32(`${b}attn_q.bias`, q, 0),
      q4(`${b}attn_k.weight`, [s.hidden, kv]),
      f32(`${b}attn_k.bias`, kv, 0),
      q4(`${b}attn_v.weight`, [s.hidden, kv]),
      f32(`${b}attn_v.bias`, kv, 0),
      q4(`${b}attn_output.weight`, [q, s.hidden]),
      f32(`${b}ffn_norm.weight`, s.hidden, 1),
      q4(`${b}ffn_gate.weight`, [s.hidden, s.feedForward]),
      q4(`${b}ffn_up.weight`, [s.hidden, s.feedForward]),
      q4(`${b}ffn_down.weight`, [s.feedForward, s.hidden]),
    );
  }
  tensors.push(f32('output_norm.weight', s.hidden, 1));
  if (!s.tiedEmbeddings) tensors.push(q4('output.weight', [s.hidden, s.vocab]));
  return tensors;
}

/** Writes the made-up model to `path`; returns the file's size in bytes. */
export function writeMadeUpQwen2(path: string, shape: Qwen2Shape, tokenizer: TokenizerJson, name = 'made-up qwen2'): number {
  const metadata = new Map([...qwen2Metadata(shape, name), ...tokenizerMetadata(tokenizer, shape.vocab)]);
  return writeGguf(path, metadata, qwen2Tensors(shape));
}
