/**
 * Whether speculative writing gives a model on this device what WebLLM's own
 * decoding gives: run once per model, library, WebLLM version and device
 * before a read speculates, and kept with its verdict.
 *
 * Greedy: a continuation of SELF_CHECK_TOKENS written plainly, then again in
 * verify passes of SELF_CHECK_DRAFT tokens drafted from the plain reply, so
 * that each pass checks the kernels' batched logits against WebLLM's decode
 * steps. A difference where the two best logits are within NEAR_TIE is a tie
 * (float rounding may break it either way), not a mismatch.
 *
 * Sampled: at the read's temperature and top-p, the app's sampling
 * distribution for the first rows of logits against WebLLM's own sampler on
 * the same logits: for each of the most likely tokens, a draw just inside
 * either end of its share of [0, 1) must give that token, so the two
 * cumulative distributions agree within SAMPLING_TOLERANCE there.
 */
import { type Sampling, samplingDistribution } from '../../../core/speculative';
import { fixedPlan, type SpeculationPlan } from '../driver/speculate';

export const SELF_CHECK_TOKENS = 48;
export const SELF_CHECK_DRAFT = 16;
export const NEAR_TIE = 1e-4;
export const SAMPLING_TOLERANCE = 1e-3;
/** Rows of logits whose sampling is compared, and the most likely tokens compared in each. */
export const SAMPLED_ROWS = 3;
export const SAMPLED_TOKENS = 8;

/** A short repeated list: a continuation that stays on it, whatever the model, and a prompt that costs little to read. */
export const SELF_CHECK_MESSAGES = [{ role: 'user' as const, content: 'one two three one two three' }];

/** WebLLM's own sampler: the token it draws from one row of logits for the uniform `u`. */
export type Sampler = (row: Float32Array, sampling: Sampling, u: number) => number;

export interface SelfCheckIo {
  /** Writes the check's greedy reply, plainly or with `plan`; gives its token ids. */
  write(plan?: SpeculationPlan): Promise<number[]>;
  /** WebLLM's sampler where this version lets it be called on given logits. */
  sampler?: Sampler;
  /** The read's sampling. */
  sampling: Sampling;
}

export interface SelfCheckOutcome {
  verdict: 'exact' | 'mismatch';
  /** What was compared, in words, for the model's settings. */
  compared: string;
}

/** Runs both comparisons; a mismatch in either turns speculation off. */
export async function selfCheck(io: SelfCheckIo): Promise<SelfCheckOutcome> {
  const plain = await io.write();
  const margins = new Map<number, number>();
  const rows: Float32Array[] = [];
  const plan: SpeculationPlan = {
    ...fixedPlan(SELF_CHECK_DRAFT, (written) => plain.slice(written.length)),
    onLogits: (index, row) => {
      margins.set(index, topMargin(row));
      if (rows.length < SAMPLED_ROWS) rows.push(row.slice());
    },
  };
  const speculative = await io.write(plan);
  // A reply too short to leave room for a draft is written without a verify pass: then nothing was compared.
  if (margins.size === 0) {
    return { verdict: 'mismatch', compared: `greedy: ${plain.length} tokens written, too few for a verify pass: nothing compared` };
  }
  const greedy = compareGreedy(plain, speculative, margins);
  const sampled = io.sampler ? rows.map((row) => compareSampling(row, io.sampling, io.sampler!)) : [];
  const bad = sampled.find((s) => s !== undefined);
  const samplingWords = io.sampler
    ? `sampling at temperature ${io.sampling.temperature} and top-p ${io.sampling.topP} on ${rows.length} rows of logits: ${bad ?? `the same within ${SAMPLING_TOLERANCE}`}`
    : "sampling: not compared (this WebLLM's sampler cannot be called on given logits)";
  return { verdict: greedy.same && !bad ? 'exact' : 'mismatch', compared: `${greedy.words}; ${samplingWords}` };
}

/** The gap between the two largest logits of a row. */
export function topMargin(row: ArrayLike<number>): number {
  let first = -Infinity;
  let second = -Infinity;
  for (let i = 0; i < row.length; i++) {
    const v = row[i]!;
    if (v > first) [first, second] = [v, first];
    else if (v > second) second = v;
  }
  return first - second;
}

/** Whether two greedy replies agree, a difference at a near-tie counting as a tie; and what was compared, in words. */
export function compareGreedy(
  plain: readonly number[],
  speculative: readonly number[],
  margins: ReadonlyMap<number, number>,
): { same: boolean; words: string } {
  const n = Math.max(plain.length, speculative.length);
  const at = Array.from({ length: n }, (_, i) => i).find((i) => plain[i] !== speculative[i]);
  const head = `greedy: ${plain.length} tokens written plainly and in verify passes of up to ${SELF_CHECK_DRAFT}`;
  if (plain.length === 0) return { same: false, words: `${head}: nothing was written` };
  if (at === undefined) return { same: true, words: `${head}: the same tokens` };
  const margin = margins.get(at);
  if (margin !== undefined && margin <= NEAR_TIE) {
    return { same: true, words: `${head}: the same up to token ${at + 1}, where the two best logits tie within ${NEAR_TIE}` };
  }
  return { same: false, words: `${head}: different at token ${at + 1}` };
}

/**
 * Undefined where WebLLM's sampler draws, just inside either end of each of
 * the most likely tokens' share of the app's cumulative distribution, that
 * token; else which token it did not.
 */
export function compareSampling(row: Float32Array, sampling: Sampling, sampler: Sampler): string | undefined {
  const p = samplingDistribution(row, sampling);
  let below = 0;
  for (let i = 0; i < Math.min(p.ids.length, SAMPLED_TOKENS); i++) {
    const above = below + p.probs[i]!;
    for (const u of [below + SAMPLING_TOLERANCE, above - SAMPLING_TOLERANCE]) {
      if (above - below <= 2 * SAMPLING_TOLERANCE || u >= 1) continue;
      const drawn = sampler(row.slice(), sampling, u);
      if (drawn !== p.ids[i])
        return `WebLLM drew token ${drawn} at ${u.toFixed(4)} where the app's distribution gives token ${p.ids[i]} (its share ${below.toFixed(4)} to ${above.toFixed(4)})`;
    }
    below = above;
  }
  return undefined;
}
