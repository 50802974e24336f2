/**
 * How many tokens a speculative pass drafts (K), plain decoding (K = 0)
 * included, chosen from what the engine measures while it writes: how far
 * drafts turn out right, what a verify pass costs for the tokens it runs, and
 * what a plain decode step costs.
 *
 * Tokens a pass writes. Real copying is bursty: a draft is mostly either a
 * long copy or wrong at its first token, so a kept share per token (a
 * geometric model) undercounts what passes write. Instead, for each drafted
 * position j the tuner counts how often a draft that reached j was kept there,
 * h(j) (the product-limit estimate of survival), and a pass drafting K writes
 * on average E(K) = 1 + Σ_{j ≤ K} h(1)·…·h(j): the kept prefix and the token
 * drawn at the first rejection (or the bonus after a fully kept draft). A
 * position with few observations leans on the one before it.
 *
 * Cost. A verify pass over the last token and K drafted ones costs
 * c(K) = A + B·K seconds (a line fitted to the timed passes); a plain step
 * costs d seconds and writes one token. The next pass drafts the K in
 * [0, cap] with the most tokens a second: 1 / d for K = 0, E(K) / c(K) else.
 *
 * Probing. While plain decoding is chosen, the engine still drafts (prompt
 * lookup costs no GPU time) and tells the tuner what plain decoding then
 * writes (`shadow`, `observeWritten`): those drafts count as passes would. So
 * copying that starts again is seen at once, at no GPU cost.
 *
 * Pure: it is fed numbers, never reads a clock.
 */

import { type CostLine, PassCosts } from './pass-costs';

export { type CostLine, fitLine } from './pass-costs';

/**
 * Before this device has been measured: an NVIDIA H200 ran a forward over k
 * tokens in about 115 ms + 2.5 ms a token at a short context, and a plain
 * decode step in 55 ms. Only their ratios matter until the first timings.
 */
export const PRIOR_COST: CostLine = { base: 0.115, perToken: 0.0025 };
export const PRIOR_DECODE = 0.055;

/**
 * The most tokens one pass drafts. On the prior line c(32) ≈ 1.7·c(0); a
 * longer draft gains little even when all of it is kept, the line was
 * measured only up to 32 drafted tokens, and a long pass holds up streaming
 * and a pause by a whole forward.
 */
export const MAX_DRAFT = 32;

export interface DraftLengthOptions {
  /** h(1) before any draft was seen, and the pseudo-count behind it and behind each position's lean on the one before. */
  priorKept: number;
  priorWeight: number;
  /** Weight each pass's counts keep after the next pass: drafts are right in runs, so the estimate follows the text. */
  acceptanceMemory: number;
  /** Weight each timing keeps after the next one of its kind (verify passes, decode steps). */
  costMemory: number;
  priorCost: CostLine;
  priorDecode: number;
  /** Weight of the prior line, in passes, once timings exist. */
  priorPasses: number;
}

/**
 * Acceptance forgets fast (0.9 a pass, about ten passes remembered), timings
 * slowly (0.98, about fifty): a pass's cost moves only as the context grows,
 * and averaging many smooths timer and scheduling noise. h(1) starts at 0.5
 * on two pseudo-counts.
 */
export const DRAFT_LENGTH_DEFAULTS: DraftLengthOptions = {
  priorKept: 0.5,
  priorWeight: 2,
  acceptanceMemory: 0.9,
  costMemory: 0.98,
  priorCost: PRIOR_COST,
  priorDecode: PRIOR_DECODE,
  priorPasses: 1,
};

/** Expected tokens written by a pass drafting k, from the kept rate of each drafted position (h[0] is position 1). */
export function expectedWritten(kept: readonly number[], k: number): number {
  let survive = 1;
  let written = 1;
  for (let j = 0; j < k; j++) {
    survive *= kept[j] ?? 0;
    written += survive;
  }
  return written;
}

/** The K in [0, cap] with the most expected tokens per second; the smaller one on a tie. */
export function bestDraft(kept: readonly number[], cost: { verify: CostLine; decode: number }, cap: number): number {
  let best = 0;
  let bestRate = 1 / Math.max(cost.decode, Number.MIN_VALUE);
  for (let k = 1; k <= Math.floor(cap); k++) {
    const rate = expectedWritten(kept, k) / Math.max(cost.verify.base + cost.verify.perToken * k, Number.MIN_VALUE);
    if (rate > bestRate * (1 + 1e-12)) {
      best = k;
      bestRate = rate;
    }
  }
  return best;
}

/** One verify pass as the tuner learns from it. */
export interface PassObservation {
  /** Tokens drafted (the pass ran these and the last written token). */
  drafted: number;
  /** Drafted tokens kept. */
  accepted: number;
  /** Whether the pass ended at a drafted token it did not keep; by default, whenever fewer than all were kept (a stop can end a pass without one). */
  rejected?: boolean;
  /** The pass's wall time, where measured. */
  seconds?: number;
}

/** What the tuner currently believes. */
export interface DraftEstimate {
  /** The share of drafted tokens kept (what a per-token model of acceptance would use). */
  alpha: number;
  /** Expected tokens a pass writes, for K = 1, 2, 4, 8, 16, 32. */
  written: Record<number, number>;
  cost: CostLine;
  /** Seconds of a plain decode step: measured, or from the verify passes' scale. */
  decode: number;
  verifyPasses: number;
  decodeSteps: number;
  /** Drafts checked against plain decoding's tokens instead of in a pass. */
  shadowPasses: number;
}

/** Per drafted position: weighted counts of drafts that reached it and of those kept there. */
class Survival {
  private reached = new Float64Array(MAX_DRAFT);
  private keptAt = new Float64Array(MAX_DRAFT);
  /** Drafted tokens, reached or not, and those kept: the kept share a per-token model would use. */
  private drafted = 0;
  private kept = 0;

  constructor(private readonly options: DraftLengthOptions) {}

  /** Every count so far weighs less: a new pass begins. */
  fade(): void {
    const m = this.options.acceptanceMemory;
    for (let j = 0; j < MAX_DRAFT; j++) {
      this.reached[j]! *= m;
      this.keptAt[j]! *= m;
    }
    this.drafted *= m;
    this.kept *= m;
  }

  /** A draft of `n` tokens was made (a pass's or one compared with plain decoding). */
  draft(n: number): void {
    this.drafted += n;
  }

  /** A draft reached position j (0-based) and was kept there or not. */
  add(j: number, kept: boolean): void {
    if (j >= MAX_DRAFT) return;
    this.reached[j]! += 1;
    if (kept) {
      this.keptAt[j]! += 1;
      this.kept += 1;
    }
  }

  /** h(j) for every position: its counts, shrunk towards the position before (position 1 towards the prior). */
  rates(): number[] {
    const { priorKept, priorWeight } = this.options;
    const out: number[] = [];
    let lean = priorKept;
    for (let j = 0; j < MAX_DRAFT; j++) {
      lean = (this.keptAt[j]! + priorWeight * lean) / (this.reached[j]! + priorWeight);
      out.push(lean);
    }
    return out;
  }

  share(): number {
    return this.drafted > 0 ? this.kept / this.drafted : this.options.priorKept;
  }
}

/**
 * The draft length for the next pass of one run's requests (one question of
 * one read): created by the run and handed to the engine with each request,
 * so that later steps start from what earlier ones measured and no other
 * book's text moves it.
 */
export class DraftLength {
  private readonly options: DraftLengthOptions;
  private readonly survival: Survival;
  private readonly costs: PassCosts;
  private verifyPasses = 0;
  private decodeSteps = 0;
  private shadowPasses = 0;
  /** The draft plain decoding is being compared with, and how far. */
  private shadowDraft: readonly number[] = [];
  private shadowAt = 0;

  constructor(options: Partial<DraftLengthOptions> = {}) {
    this.options = { ...DRAFT_LENGTH_DEFAULTS, ...options };
    this.survival = new Survival(this.options);
    this.costs = new PassCosts(this.options);
  }

  /** Learns from one verify pass. */
  observePass(pass: PassObservation): void {
    if (pass.drafted <= 0) return;
    const rejected = pass.rejected ?? pass.accepted < pass.drafted;
    this.survival.fade();
    this.survival.draft(pass.drafted);
    this.endReply(); // a pass drafts afresh from where the reply is: a draft being compared ends
    for (let j = 0; j < pass.accepted; j++) this.survival.add(j, true);
    if (rejected && pass.accepted < pass.drafted) this.survival.add(pass.accepted, false);
    this.verifyPasses++;
    if (pass.seconds !== undefined) this.costs.observePass(pass.drafted, pass.seconds);
  }

  /** Learns from one plain decode step's wall time. */
  observeDecode(seconds: number): void {
    if (this.costs.observeDecode(seconds)) this.decodeSteps++;
  }

  /** Whether a draft is being compared with plain decoding: then the engine need not draft again. */
  get shadowing(): boolean {
    return this.shadowAt < this.shadowDraft.length;
  }

  /** A draft that plain decoding's next tokens will be compared with, as if a pass had drafted it. */
  shadow(draft: readonly number[]): void {
    if (!draft.length) return;
    this.survival.fade();
    this.shadowDraft = draft.slice(0, MAX_DRAFT);
    this.survival.draft(this.shadowDraft.length);
    this.shadowAt = 0;
    this.shadowPasses++;
  }

  /** A token plain decoding wrote: the shadow draft's next position was kept if it is that token; a miss ends it. */
  observeWritten(token: number): void {
    if (!this.shadowing) return;
    const kept = this.shadowDraft[this.shadowAt] === token;
    this.survival.add(this.shadowAt, kept);
    this.shadowAt = kept ? this.shadowAt + 1 : this.shadowDraft.length;
  }

  /** A reply ended: a shadow draft still open is censored where it got to. */
  endReply(): void {
    this.shadowDraft = [];
    this.shadowAt = 0;
  }

  /** h(j), the rate at which drafts that reach position j are kept there (index 0 is position 1). */
  keptRates(): number[] {
    return this.survival.rates();
  }

  /**
   * The K for the next pass, in [0, cap]: 0 is a plain decode step. `cap`
   * is the room the pass has (the reply's cap, the window): a K chosen for
   * more room and then cut to it can be slower than plain decoding. While a
   * draft compared with plain decoding is being kept, a pass now would draft
   * its rest: the rates then start after the positions it has kept so far
   * (copying, once begun, tends to go on).
   */
  next(cap: number = MAX_DRAFT): number {
    return bestDraft(this.ratesAhead(), { verify: this.cost(), decode: this.decodeCost() }, Math.min(cap, MAX_DRAFT));
  }

  /** h(j) for the positions a pass now would draft: after those of the draft being compared that were kept (see next). */
  ratesAhead(): number[] {
    const rates = this.keptRates();
    const from = this.shadowing ? this.shadowAt : 0;
    return [...rates.slice(from), ...Array<number>(from).fill(rates[MAX_DRAFT - 1]!)];
  }

  /** c(k) fitted to the timed passes (see PassCosts). */
  cost(): CostLine {
    return this.costs.cost();
  }

  /** Seconds of a plain step (see PassCosts). */
  decodeCost(): number {
    return this.costs.decodeCost();
  }

  estimate(): DraftEstimate {
    const rates = this.keptRates();
    return {
      alpha: this.survival.share(),
      written: Object.fromEntries([1, 2, 4, 8, 16, 32].map((k) => [k, expectedWritten(rates, k)])),
      cost: this.cost(),
      decode: this.decodeCost(),
      verifyPasses: this.verifyPasses,
      decodeSteps: this.decodeSteps,
      shadowPasses: this.shadowPasses,
    };
  }
}
