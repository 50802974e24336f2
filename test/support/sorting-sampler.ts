/**
 * The sampling distribution as the app first computed it: every token's
 * weight, then the whole vocabulary sorted. Kept as the reference that the
 * sampler which sorts only the nucleus must match, in tests and in the
 * sampling benchmark's baseline.
 */
import { argmax, type Distribution, GREEDY_TEMPERATURE, type Sampling } from '../../src/core/speculative';

export function sortingDistribution(logits: ArrayLike<number>, sampling: Sampling, from = 0, length = logits.length - from): Distribution {
  if (sampling.temperature < GREEDY_TEMPERATURE) return { ids: [argmax(logits, from, length)], probs: [1] };
  const top = logits[from + argmax(logits, from, length)]!;
  const weights = new Float64Array(length);
  let sum = 0;
  for (let i = 0; i < length; i++) sum += weights[i] = Math.exp((logits[from + i]! - top) / sampling.temperature);
  const order: number[] = [];
  for (let i = 0; i < length; i++) if (weights[i]! > 0) order.push(i);
  if (sampling.topP >= 1) return { ids: order, probs: order.map((i) => weights[i]! / sum) };
  order.sort((a, b) => weights[b]! - weights[a]! || a - b);
  const ids: number[] = [];
  let kept = 0;
  for (const i of order) {
    ids.push(i);
    kept += weights[i]!;
    if (kept >= sampling.topP * sum) break;
  }
  return { ids, probs: ids.map((i) => weights[i]! / kept) };
}

/** Qwen2.5's vocabulary, as its logits rows come. */
export const QWEN_VOCAB = 151_936;

/**
 * A row of logits shaped like a language model's: `head` likely tokens at
 * seeded places, from `top` down in steps of `step`, over a tail of
 * Gaussian noise (mean 0, deviation `spread`).
 */
export function peakedLogits(random: () => number, shape: { vocab: number; head: number; top: number; step: number; spread: number }): Float32Array {
  const row = new Float32Array(shape.vocab);
  for (let i = 0; i < row.length; i += 2) {
    // Box–Muller: two Gaussian numbers from two uniform ones.
    const r = Math.sqrt(-2 * Math.log(1 - random()));
    const a = 2 * Math.PI * random();
    row[i] = shape.spread * r * Math.cos(a);
    if (i + 1 < row.length) row[i + 1] = shape.spread * r * Math.sin(a);
  }
  for (let k = 0; k < shape.head; k++) row[Math.floor(random() * row.length)] = shape.top - k * shape.step;
  return row;
}
