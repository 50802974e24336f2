/**
 * How many tokens each member of a batch drafts in the next pass. A batch's
 * pass runs every member's tokens at once and none moves on until it ends,
 * and the batch ends when its last member does: a member that copies and
 * gets ahead gains the batch nothing while another still has more to write,
 * and its draft makes every member's pass a verify pass, dearer than a
 * decode pass. So the drafts are chosen for the batch's end: each member
 * offers what prompt lookup drafted (up to its room: its reply's cap, the
 * window), the tokens its reply may still write, and its tuner's kept rates
 * for the drafted positions; the pass drafts for whichever member would end
 * last at that pace, as far as that brings the batch's end nearer, and the
 * others ride along with their last token. Where no draft pays, the pass is a
 * plain decode pass. The costs are the batch's own (PassCosts over the
 * tokens drafted in the whole pass), learned from its timed passes, sampling
 * included, starting from what the members' tuners measured.
 */
import { DRAFT_LENGTH_DEFAULTS, type DraftLength, expectedWritten, PRIOR_COST, PRIOR_DECODE } from '../../../core/draft-length';
import { PassCosts } from '../../../core/pass-costs';
import { DEFAULT_LOOKUP, lookupDraft } from '../../../core/prompt-lookup';
import type { SpeculationPlan } from './speculate';

/** One member's offer for the next pass. */
export interface DraftOffer {
  /** What it could draft, no longer than its room. */
  draft: readonly number[];
  /** Tokens its reply may still write (its cap, the window): where it may end, its stop tokens unforeseen. */
  left: number;
  /** Its tuner's kept rates for the positions a pass now would draft (DraftLength.ratesAhead); none: a fixed K, the whole draft runs. */
  rates?: readonly number[];
}

/** What a request with `plan` (none: it drafts nothing) offers for the next pass, its reply so far `written`, `left` more tokens fitting. */
export function offerFor(plan: SpeculationPlan | undefined, prompt: readonly number[], written: readonly number[], left: number): DraftOffer {
  if (!plan) return { draft: [], left };
  const k = Math.min(plan.maxDraft, left - 1); // the pass writes one more than it keeps
  let draft: readonly number[] = [];
  if (k > 0 && plan.draft) draft = plan.draft(written).slice(0, k);
  else if (k > 0) draft = lookupDraft(prompt, written, { maxNgram: plan.maxNgram || DEFAULT_LOOKUP.maxNgram, minNgram: 1, maxDraft: k });
  return plan.tuner ? { draft, left, rates: plan.tuner.ratesAhead() } : { draft, left };
}

/**
 * Tokens each member drafts in the next pass (all 0: a plain decode pass),
 * for the batch's nearest end. A member writing E(k) tokens a pass, E from
 * its kept rates (1 without them), with `left` to go, would end in
 * left / E(k) passes; the batch's pace is its slowest member's,
 * min E(k) / left, a pass's cost c (Σ k) apart. Raising the slowest member's
 * draft a token at a time, while it has more to draft, visits the cheapest
 * drafts for each pace the batch can reach: the best pace a second among them
 * wins. A fixed K's draft runs whole.
 */
export function chooseDrafts(offers: readonly DraftOffer[], costs: PassCosts): number[] {
  const line = costs.cost();
  const decode = costs.decodeCost();
  const ks = offers.map((o) => (o.rates ? 0 : o.draft.length));
  const paces = () => offers.map((o, i) => (o.rates ? expectedWritten(o.rates, ks[i]!) : 1) / Math.max(o.left, 1));
  const rate = (pace: readonly number[]) => {
    const drafted = ks.reduce((a, b) => a + b, 0);
    return Math.min(...pace) / Math.max(drafted ? line.base + line.perToken * drafted : decode, Number.MIN_VALUE);
  };
  let pace = paces();
  let [best, bestRate] = [[...ks], rate(pace)];
  for (;;) {
    const slowest = pace.indexOf(Math.min(...pace));
    const o = offers[slowest]!;
    if (!o.rates || ks[slowest]! >= Math.min(o.draft.length, o.rates.length)) break;
    ks[slowest]!++;
    pace = paces();
    const r = rate(pace);
    if (r > bestRate * (1 + 1e-12)) [best, bestRate] = [[...ks], r];
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
