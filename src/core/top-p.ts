/**
 * The tempered softmax of one position's logits, cut to top-p, without
 * sorting the vocabulary (151,936 tokens for Qwen): what sorting every
 * token's weight gives, the same ids in the same order and the same
 * probabilities to the bit, for a small share of its cost.
 *
 * Every token's weight is exp((logit - top) / temperature) and the sum is
 * taken in id order, as the plain computation takes them. The nucleus is the
 * fewest tokens, most likely first (ties: the lower id first), whose weights
 * reach top_p times the sum; its probabilities are its weights over their own
 * sum, which depends on the nucleus alone. The tokens whose weight is at or
 * above any threshold lead the full order, so sorting only those and walking
 * them gives the plain walk whenever it ends among them.
 *
 * The fast way weighs exactly only the tokens near the top; the rest are
 * counted by band, which bounds their sum within a few per cent of it. A walk that ends clear of where the bounds leave top_p's
 * cut uncertain is the plain walk; one that does not, or a nucleus that
 * reaches far down the vocabulary, is worked out from every weight.
 */

/** One position's logits, `length` of them from `from`, with `top` the largest. */
export interface TemperedRow {
  logits: ArrayLike<number>;
  from: number;
  length: number;
  top: number;
  temperature: number;
}

/** Bands per unit of tempered logit below the top: each is a factor of e^(1/16), about 1.065, in weight. */
const PER_UNIT = 16;
/** Tokens less than 20 units below the top (weight above e^-20, about 2e-9) are weighed exactly; the rest counted by band. */
const NEAR = 20 * PER_UNIT;
/** The last band holds every token from 48 units down (weight at most e^-48, about 1e-21). */
const BANDS = 48 * PER_UNIT;
/**
 * Relative room around the bounds on the sum, far wider than the rounding of
 * a sum of a million weights (1e-10) and of exp (a few 1e-16).
 */
const SLACK = 1e-9;

/** The nucleus at `topP` (below 1), most likely first, and its probabilities. */
export function nucleus(row: TemperedRow, topP: number): { ids: number[]; probs: number[] } {
  return boundedNucleus(row, topP) ?? exactNucleus(row, topP);
}

/**
 * The nucleus from the near tokens' exact weights and the others' counts by
 * band; undefined where those cannot tell it (the cut too close to call, a
 * nucleus reaching far down, a NaN among the logits).
 */
function boundedNucleus(row: TemperedRow, topP: number): { ids: number[]; probs: number[] } | undefined {
  const { logits, from, length, top, temperature } = row;
  const scale = PER_UNIT / temperature;
  const counts = new Float64Array(BANDS);
  const near = new Int32Array(length);
  let nearCount = 0;
  for (let i = 0; i < length; i++) {
    const band = (top - logits[from + i]!) * scale;
    // A NaN is taken as near, where its weight makes the sum NaN.
    if (!(band >= NEAR)) near[nearCount++] = i;
    else counts[band < BANDS - 1 ? band | 0 : BANDS - 1]! += 1;
  }
  const weights = new Float64Array(nearCount);
  // The near weights summed by band, to choose which of them to sort.
  const byBand = new Float64Array(NEAR);
  let nearSum = 0;
  for (let k = 0; k < nearCount; k++) {
    const logit = logits[from + near[k]!]!;
    const w = (weights[k] = Math.exp((logit - top) / temperature));
    nearSum += w;
    byBand[((top - logit) * scale) | 0]! += w;
  }
  if (Number.isNaN(nearSum)) return undefined;
  let farLow = 0;
  let farHigh = 0;
  for (let b = NEAR; b < BANDS; b++) {
    const n = counts[b]!;
    if (n === 0) continue;
    farHigh += n * Math.exp(-b / PER_UNIT);
    if (b < BANDS - 1) farLow += n * Math.exp(-(b + 1) / PER_UNIT);
  }
  // The plain computation's top_p × sum lies in [goalLow, goalHigh].
  const goalLow = topP * (nearSum + farLow) * (1 - SLACK);
  const goalHigh = topP * (nearSum + farHigh) * (1 + SLACK);
  let cut = 0;
  for (let reached = byBand[0]!; reached < goalHigh; reached += byBand[cut]!) {
    // The threshold must stay above every far token's weight, a band below the near ones' edge.
    if (++cut > NEAR - 2) return undefined;
  }
  const threshold = Math.exp(-(cut + 1) / PER_UNIT);
  const order: number[] = [];
  for (let k = 0; k < nearCount; k++) if (weights[k]! >= threshold) order.push(k);
  // `near` is in id order, so its places break ties as the ids do.
  order.sort((a, b) => weights[b]! - weights[a]! || a - b);
  let kept = 0;
  for (let n = 0; n < order.length; n++) {
    kept += weights[order[n]!]!;
    if (kept >= goalHigh) {
      const taken = order.slice(0, n + 1);
      return { ids: taken.map((k) => near[k]!), probs: taken.map((k) => weights[k]! / kept) };
    }
    if (kept >= goalLow) return undefined;
  }
  return undefined;
}

/**
 * The nucleus from every token's weight and their exact sum: only the
 * weights in the bands that reach top_p sorted, or every positive one should
 * rounding leave the walk over those short of it.
 */
function exactNucleus(row: TemperedRow, topP: number): { ids: number[]; probs: number[] } {
  const { logits, from, length, top, temperature } = row;
  const weights = new Float64Array(length);
  const byBand = new Float64Array(BANDS);
  let sum = 0;
  let positive = 0;
  for (let i = 0; i < length; i++) {
    const x = (logits[from + i]! - top) / temperature;
    const w = Math.exp(x);
    sum += weights[i] = w;
    if (w > 0) positive++;
    const below = -x * PER_UNIT;
    byBand[below < BANDS - 1 ? below | 0 : BANDS - 1]! += w;
  }
  const goal = topP * sum;
  let band = 0;
  for (let reached = byBand[0]!; reached < goal && band < BANDS - 1;) reached += byBand[++band]!;
  const walk = (threshold: number) => {
    const order: number[] = [];
    for (let i = 0; i < length; i++) if (weights[i]! >= threshold) order.push(i);
    order.sort((a, b) => weights[b]! - weights[a]! || a - b);
    const ids: number[] = [];
    let kept = 0;
    for (const i of order) {
      ids.push(i);
      kept += weights[i]!;
      if (kept >= goal) break;
    }
    // With every positive weight in, the walk is the whole one even where rounding keeps it short of top_p.
    return { ids, kept, whole: kept >= goal || order.length === positive };
  };
  // The chosen band's lower edge, or from the last band every positive weight.
  const first = walk(band < BANDS - 1 ? Math.exp(-(band + 1) / PER_UNIT) : Number.MIN_VALUE);
  // Rounding may leave the walk over the chosen bands short of top_p: then every positive weight is walked.
  const { ids, kept } = first.whole ? first : walk(Number.MIN_VALUE);
  return { ids, probs: ids.map((i) => weights[i]! / kept) };
}

/** At top-p 1: every token of positive weight, in id order, and its probability. */
export function wholeSoftmax(row: TemperedRow): { ids: Int32Array; probs: Float64Array } {
  const { logits, from, length, top, temperature } = row;
  const weights = new Float64Array(length);
  let sum = 0;
  for (let i = 0; i < length; i++) sum += weights[i] = Math.exp((logits[from + i]! - top) / temperature);
  const ids = new Int32Array(length);
  let n = 0;
  for (let i = 0; i < length; i++) {
    const w = weights[i]!;
    // n <= i: each weight is read before its place is written over with a probability.
    if (w > 0) {
      ids[n] = i;
      weights[n++] = w / sum;
    }
  }
  return { ids: ids.subarray(0, n), probs: weights.subarray(0, n) };
}
