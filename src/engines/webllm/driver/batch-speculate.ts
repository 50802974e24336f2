/**
 * How many tokens each member of a batch drafts in the next pass. A batch's
 * pass runs every member's tokens at once and none moves on until it ends,
 * so one member's draft costs every member its time, and a pass where any
 * member drafts is a verify pass, not the cheaper decode pass. The drafts are
 * therefore chosen together, for the batch's tokens a second: each member
 * offers what prompt lookup drafted (up to its room: its reply's cap, the
 * window) and its tuner's kept rates for those positions; a member drafts
 * as far as each further token's chance of being written is worth its share
 * of the pass's time at that rate, one with nothing worth drafting rides
 * along with its last token, and where no draft pays, the pass is a plain
 * decode pass. The costs are the batch's own (PassCosts over the tokens
 * drafted in the whole pass), learned from its timed passes, sampling
 * included, starting from what the members' tuners measured.
 */
import { DRAFT_LENGTH_DEFAULTS, type DraftLength, expectedWritten, PRIOR_COST, PRIOR_DECODE } from '../../../core/draft-length';
import type { CostLine } from '../../../core/pass-costs';
import { PassCosts } from '../../../core/pass-costs';
import { DEFAULT_LOOKUP, lookupDraft } from '../../../core/prompt-lookup';
import type { SpeculationPlan } from './speculate';

/** One member's offer for the next pass. */
export interface DraftOffer {
  /** What it could draft, no longer than its room. */
  draft: readonly number[];
  /** Its tuner's kept rates for the positions a pass now would draft (DraftLength.ratesAhead); none: a fixed K, the whole draft runs. */
  rates?: readonly number[];
}

/** Where the drafts' rate stops changing: each round moves it up, and a handful settles it. */
const ROUNDS = 16;

/** What a request with `plan` (none: it drafts nothing) offers for the next pass, its reply so far `written`, `room` drafted tokens fitting. */
export function offerFor(plan: SpeculationPlan | undefined, prompt: readonly number[], written: readonly number[], room: number): DraftOffer {
  if (!plan) return { draft: [] };
  const k = Math.min(plan.maxDraft, room);
  let draft: readonly number[] = [];
  if (k > 0 && plan.draft) draft = plan.draft(written).slice(0, k);
  else if (k > 0) draft = lookupDraft(prompt, written, { maxNgram: plan.maxNgram || DEFAULT_LOOKUP.maxNgram, minNgram: 1, maxDraft: k });
  return plan.tuner ? { draft, rates: plan.tuner.ratesAhead() } : { draft };
}

/**
 * Tokens each member drafts in the next pass (all 0: a plain decode pass),
 * for the most expected tokens a second over the whole batch. The rate of
 * drafts k is Σ E(k_i) / c(Σ k_i), E from each member's kept rates (a
 * member without them writes 1); a member's best k at rate r maximises
 * E(k) − r·B·k (B the cost of a drafted token), and r is then that choice's
 * rate, until it no longer rises (Dinkelbach's method for a ratio).
 */
export function chooseDrafts(offers: readonly DraftOffer[], costs: PassCosts): number[] {
  const line = costs.cost();
  const fixed = offers.map((o) => (o.rates ? 0 : o.draft.length));
  const forced = fixed.some((k) => k > 0);
  let best = forced ? fixed : offers.map(() => 0);
  let rate = forced ? passRate(offers, fixed, line) : offers.length / Math.max(costs.decodeCost(), Number.MIN_VALUE);
  for (let round = 0; round < ROUNDS; round++) {
    const price = rate * line.perToken;
    const ks = offers.map((o, i) => (o.rates ? worthDrafting(o.rates, o.draft.length, price) : fixed[i]!));
    const next = ks.some((k) => k > 0) ? passRate(offers, ks, line) : 0;
    if (!(next > rate * (1 + 1e-12))) break;
    [best, rate] = [ks, next];
  }
  return best;
}

/** Expected tokens a second of a verify pass with drafts `ks`. */
function passRate(offers: readonly DraftOffer[], ks: readonly number[], line: CostLine): number {
  const written = offers.reduce((sum, o, i) => sum + (o.rates ? expectedWritten(o.rates, ks[i]!) : 1), 0);
  const drafted = ks.reduce((a, b) => a + b, 0);
  return written / Math.max(line.base + line.perToken * drafted, Number.MIN_VALUE);
}

/** The k in [0, most] with the most expected tokens past the first, less `price` a drafted token; the smaller on a tie. */
function worthDrafting(rates: readonly number[], most: number, price: number): number {
  let [best, bestGain, gain, survive] = [0, 0, 0, 1];
  for (let k = 1; k <= Math.min(most, rates.length); k++) {
    survive *= rates[k - 1]!;
    gain += survive - price;
    if (gain > bestGain + 1e-12) [best, bestGain] = [k, gain];
  }
  return best;
}

/**
 * A batch's pass costs, before its first pass: the mean of what its members'
 * tuners measured (a pass's time as a member waited for it, the same
 * meaning as the batch's), or the prior where none speculates with a tuner.
 */
export function batchCosts(tuners: readonly DraftLength[]): PassCosts {
  const n = tuners.length;
  const mean = (f: (t: DraftLength) => number) => tuners.reduce((sum, t) => sum + f(t), 0) / n;
  const measured = { base: mean((t) => t.cost().base), perToken: mean((t) => t.cost().perToken), decode: mean((t) => t.decodeCost()) };
  // A line the batch can scale: no tuner, or none that took any time (a clock that did not move), leaves the prior's.
  const usable = n > 0 && measured.base > 0 && measured.decode > 0 && measured.perToken >= 0;
  const priorCost = usable ? { base: measured.base, perToken: measured.perToken } : PRIOR_COST;
  return new PassCosts({ ...DRAFT_LENGTH_DEFAULTS, priorCost, priorDecode: usable ? measured.decode : PRIOR_DECODE });
}
