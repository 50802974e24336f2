/**
 * The acceptance rule of speculative decoding for a deterministic draft,
 * which writes exactly what plain sampling would: at each position the token
 * written has the request's own distribution p given the tokens before it.
 * A drafted token x is kept with probability p(x); at the first one rejected
 * a token is drawn from p with x taken out (renormalised); when every drafted
 * token was kept, one more (the bonus) is drawn from p. Here each position's
 * token is drawn as plain sampling draws it and a draft is kept where it
 * matches (see decide): the same law, and the same reply for the same numbers.
 */
import { nucleus, wholeSoftmax } from './top-p';

/**
 * A sampling distribution: the tokens it can give, each once, and their
 * probabilities (summing to 1), in the order a draw walks them.
 */
export interface Distribution {
  ids: ArrayLike<number>;
  probs: ArrayLike<number>;
}

export interface Sampling {
  /** 0 (or below WebLLM's 1e-6) means the most likely token, always. */
  temperature: number;
  /** Nucleus: the fewest most likely tokens whose probabilities reach top_p, renormalised. */
  topP: number;
}

/** Below this WebLLM's samplers take the most likely token. */
export const GREEDY_TEMPERATURE = 1e-6;

/** The first index of the largest value. */
export function argmax(values: ArrayLike<number>, from = 0, length = values.length - from): number {
  let best = from;
  for (let i = from + 1; i < from + length; i++) if (values[i]! > values[best]!) best = i;
  return best - from;
}

/**
 * The distribution a request samples from, given one position's logits
 * (`length` of them from `from`): tempered softmax, then top-p. Below top-p
 * 1 it is the nucleus, most likely first (ties: the lower id first); at
 * top-p 1, every token of positive weight in id order. The nucleus is found
 * without sorting the vocabulary (see top-p.ts).
 */
export function samplingDistribution(logits: ArrayLike<number>, sampling: Sampling, from = 0, length = logits.length - from): Distribution {
  const { temperature, topP } = sampling;
  if (temperature < GREEDY_TEMPERATURE) return { ids: [argmax(logits, from, length)], probs: [1] };
  const row = { logits, from, length, top: logits[from + argmax(logits, from, length)]!, temperature };
  return topP >= 1 ? wholeSoftmax(row) : nucleus(row, topP);
}

/** The probability of `token` under `p`. */
export function probability(p: Distribution, token: number): number {
  const { ids } = p;
  // A token listed at the place of its id needs no search: so is every token of a whole distribution with none left out (ids 0, 1, 2, …).
  if (ids[token] === token) return p.probs[token]!;
  for (let i = 0; i < ids.length; i++) if (ids[i] === token) return p.probs[i]!;
  return 0;
}

/** A draw from `p` by its cumulative probabilities in listed order, for a uniform `u` in [0, 1). */
export function drawFrom(p: Distribution, u: number, except?: number): number {
  const skip = except === undefined ? 0 : probability(p, except);
  const target = u * (1 - skip);
  let cumulative = 0;
  let last = -1;
  for (let i = 0; i < p.ids.length; i++) {
    if (p.ids[i] === except) continue;
    last = p.ids[i]!;
    cumulative += p.probs[i]!;
    if (target < cumulative) return last;
  }
  if (last < 0) throw new Error('No token is left to draw from.');
  return last; // rounding left the target a hair above the last sum
}

export interface Decision {
  token: number;
  /** Whether `token` is the drafted one, kept. */
  accepted: boolean;
}

/**
 * One position: the token is drawn from p with one uniform number (none
 * where nothing is left to chance, a greedy request), and `drafted` is kept
 * where it is that token. So it is kept with probability p(drafted), a
 * rejection writes a token of p with the drafted one taken out
 * (renormalised), as the acceptance rule has it; and the token written is
 * the one plain sampling draws with the same number, whatever was drafted:
 * with numbers fixed per position (replyRandom), a seeded reply is the same
 * drafted or not.
 */
export function decide(p: Distribution, drafted: number | undefined, random: () => number): Decision {
  const token = p.ids.length === 1 ? p.ids[0]! : drawFrom(p, random());
  return { token, accepted: drafted !== undefined && token === drafted };
}

export interface PassResult {
  /** Drafted tokens kept. */
  accepted: number;
  /** Tokens written: the kept ones and the one drawn after them, unless writing stopped first. */
  written: number;
}

/**
 * One verify pass over `draft`: position i's distribution comes from
 * `distributionAt(i)`, asked only once the tokens before it are committed
 * (penalties see exactly the written prefix). `commit` takes each written
 * token and answers whether writing goes on (false at a stop token, the
 * reply's cap or the context's end).
 */
export function verifyPass(
  draft: readonly number[],
  distributionAt: (position: number) => Distribution,
  commit: (token: number) => boolean,
  random: () => number,
): PassResult {
  let accepted = 0;
  let written = 0;
  for (let i = 0; i <= draft.length; i++) {
    const decision = decide(distributionAt(i), draft[i], random);
    if (decision.accepted) accepted++;
    written++;
    if (!commit(decision.token) || !decision.accepted) break;
  }
  return { accepted, written };
}

/**
 * Penalties on the logits of tokens already written, before sampling: each
 * written token loses `presence` plus `frequency` per time written, then a
 * repetition penalty above 1 divides its logit where positive and multiplies
 * it where negative. Zero, zero and one change nothing.
 */
export interface Penalties {
  presence: number;
  frequency: number;
  repetition: number;
}

export const NO_PENALTIES: Penalties = { presence: 0, frequency: 0, repetition: 1 };

/** `logits` (one position, changed in place) penalised for the tokens counted in `appeared`. */
export function applyPenalties(logits: Float32Array | number[], appeared: ReadonlyMap<number, number>, penalties: Penalties): void {
  const { presence, frequency, repetition } = penalties;
  if (presence === 0 && frequency === 0 && repetition === 1) return;
  for (const [token, count] of appeared) {
    let v = logits[token]! - (presence + count * frequency);
    if (repetition !== 1) v = v > 0 ? v / repetition : v * repetition;
    logits[token] = v;
  }
}
