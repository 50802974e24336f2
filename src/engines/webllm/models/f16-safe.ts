/**
 * Scales for made-up weights that keep every activation far inside half
 * precision's range (±65,504) through all of a model's layers, so that a
 * q4f16_1 library run with them can only give NaN or infinite logits through
 * a fault of the GPU's arithmetic (its driver), never through overflow.
 *
 * The bound is a worst case, not an estimate: every 4-bit code is taken at
 * its largest magnitude (MLC's q4 codes 0…15 stand for −7…8 times the scale),
 * and every sum at its largest. RMSNorm (weights of 1) leaves a vector whose
 * absolute values sum to at most its length, whatever went in; so each block
 * of a layer adds a bounded amount to the residual stream, and the bound
 * grows with the layer count, not exponentially.
 */
import type { LibraryMetadata } from './library-metadata';

export const F16_MAX = 65_504;
/** How far inside f16's range every bound must stay: "far inside" is 64 times below its largest value. */
export const F16_HEADROOM = 64;
export const ACTIVATION_LIMIT = F16_MAX / F16_HEADROOM;
/** The largest magnitude a 4-bit code stands for, in scales. */
const CODE_MAX = 8;
/** The residual stream's bound: small enough that its square (RMSNorm's sum of squares) stays inside the limit too. */
const RESIDUAL_TARGET = 16;

/** One scale per kind of quantised weight. */
export interface MadeUpScales {
  embed: number;
  /** Query, key and value projections (Qwen2's c_attn). */
  qkv: number;
  /** The attention output projection. */
  o: number;
  gateUp: number;
  down: number;
  /** lm_head, where the model has its own (the 7B); the tied ones read the embedding. */
  head: number;
}

/** The shapes the bound depends on, read from the library's parameters. */
export interface BoundShapes {
  hidden: number;
  /** The attention output projection's input: heads × head size. */
  attention: number;
  intermediate: number;
  layers: number;
  headDim: number;
  /** Whether the logits come from an lm_head of their own. */
  ownHead: boolean;
  /** The storage type of the scales: float16 for q4f16 libraries. */
  scaleDtype: string;
}

export function boundShapes(meta: LibraryMetadata): BoundShapes {
  const param = (pattern: RegExp) => {
    const p = meta.params.find((x) => pattern.test(x.name));
    if (!p) throw new Error(`The model library has no parameter matching ${pattern}: the f16 bound knows Qwen2-shaped models only.`);
    return p;
  };
  const kv = meta.kv_cache as { num_hidden_layers: number; head_dim: number } | undefined;
  const layers = new Set(meta.params.map((p) => /layers\.(\d+)\./.exec(p.name)?.[1]).filter(Boolean)).size;
  const scale = param(/\.q_scale$/);
  return {
    hidden: param(/(^|\.)norm\.weight$/).shape[0]!,
    // q_weight packs 8 codes per uint32: the input size is 8 × its second dimension.
    attention: param(/layers\.0\.self_attn\.o_proj\.q_weight$/).shape[1]! * 8,
    intermediate: param(/layers\.0\.mlp\.down_proj\.q_weight$/).shape[1]! * 8,
    layers: kv?.num_hidden_layers ?? layers,
    headDim: kv?.head_dim ?? 128,
    ownHead: meta.params.some((p) => p.name.startsWith('lm_head.')),
    scaleDtype: scale.dtype,
  };
}

/** Each quantity's worst case, for the shapes and scales given. */
export function activationBounds(s: BoundShapes, k: MadeUpScales): Record<string, number> {
  // A linear layer after RMSNorm: the input's absolute values sum to at most its length.
  const afterNorm = (scale: number, inputs: number) => CODE_MAX * scale * inputs;
  const qkv = afterNorm(k.qkv, s.hidden);
  // Rotary embedding turns pairs of values: one can grow by √2. Scores are q·k / √d.
  const scores = (s.headDim * (Math.SQRT2 * qkv) ** 2) / Math.sqrt(s.headDim);
  // Softmax weights sum to 1: the attention's output is no larger than the values.
  const attentionOut = CODE_MAX * k.o * s.attention * qkv;
  const gateUp = afterNorm(k.gateUp, s.hidden);
  // SiLU(g) is no larger than |g|.
  const mlpProduct = gateUp * gateUp;
  const down = CODE_MAX * k.down * s.intermediate * mlpProduct;
  const residual = CODE_MAX * k.embed + s.layers * (attentionOut + down);
  return {
    embedding: CODE_MAX * k.embed,
    normalized: Math.sqrt(s.hidden), // one element of an RMSNorm output
    qkv,
    scores,
    attentionOut,
    gateUp,
    mlpProduct,
    down,
    residual,
    residualSquared: residual * residual,
    logits: afterNorm(s.ownHead ? k.head : k.embed, s.hidden),
  };
}

/** IEEE half-precision bits of a non-negative number (round to nearest; subnormals kept). */
export function halfBits(x: number): number {
  if (!(x >= 0) || x > F16_MAX) throw new RangeError(`${x} is no non-negative half float.`);
  if (x === 0) return 0;
  const e = Math.floor(Math.log2(x));
  if (e < -14) return Math.round(x / 2 ** -24); // subnormal: a multiple of 2^-24
  return ((e + 15) << 10) + Math.round((x / 2 ** e - 1) * 1024); // a mantissa of 1024 carries into the exponent
}

export function halfValue(bits: number): number {
  const e = (bits >> 10) & 0x1f;
  const m = bits & 0x3ff;
  return e === 0 ? m * 2 ** -24 : (1 + m / 1024) * 2 ** (e - 15);
}

/** A scale as the library stores it (a half or a single float). */
function stored(x: number, dtype: string): number {
  return dtype === 'float16' ? halfValue(halfBits(x)) : Math.fround(x);
}

/**
 * Scales that keep every bound inside ACTIVATION_LIMIT: the query, key,
 * value, gate and up projections at most 1; the residual stream at most 16,
 * shared out among the layers' two output projections; the logits as sharp
 * as the limit allows, so sampling still has a clear choice.
 */
export function f16SafeScales(meta: LibraryMetadata): MadeUpScales {
  const s = boundShapes(meta);
  const embed = 0.02;
  const perBlock = (RESIDUAL_TARGET - CODE_MAX * embed) / (2 * s.layers);
  const unit = 1 / (CODE_MAX * s.hidden);
  const scales: MadeUpScales = {
    embed,
    qkv: unit,
    o: perBlock / (CODE_MAX * s.attention),
    gateUp: unit,
    down: perBlock / (CODE_MAX * s.intermediate),
    head: Math.min(0.02, ACTIVATION_LIMIT / 2 / (CODE_MAX * s.hidden)),
  };
  if (!s.ownHead) scales.embed = Math.min(embed, scales.head);
  for (const key of Object.keys(scales) as (keyof MadeUpScales)[]) scales[key] = stored(scales[key], s.scaleDtype);
  return scales;
}

/** Which scale a quantised parameter takes, by its name. */
export function scaleFor(name: string, scales: MadeUpScales): number {
  if (/embed_tokens/.test(name)) return scales.embed;
  if (/lm_head/.test(name)) return scales.head;
  if (/c_attn|qkv_proj|q_proj|k_proj|v_proj/.test(name)) return scales.qkv;
  if (/o_proj/.test(name)) return scales.o;
  if (/gate_up_proj|gate_proj|up_proj/.test(name)) return scales.gateUp;
  if (/down_proj/.test(name)) return scales.down;
  // A kind of weight this bound does not know: the smallest scale keeps it inside every bound above.
  return Math.min(...Object.values(scales));
}
