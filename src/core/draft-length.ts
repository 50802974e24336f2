/**
 * How many tokens a speculative pass drafts (K), chosen from what the engine
 * measures while it writes: how often drafted tokens are kept, and what a
 * verify pass costs for the tokens it runs.
 *
 * Model. Each drafted position is kept with probability α until the first one
 * that is not (geometric), so a pass that drafts K writes on average
 * E(K) = (1 − α^(K+1)) / (1 − α) tokens: the kept prefix and the one drawn at
 * the rejection (or the bonus after a fully kept draft). A verify pass over
 * the last token and K drafted ones costs c(K) = A + B·K seconds. The next
 * pass drafts the K in [1, cap] that writes the most tokens a second,
 * E(K) / c(K). Only the ratio B / A matters for that choice, not the scale.
 */

/** Seconds of one verify pass drafting k tokens: base + perToken·k. */
export interface CostLine {
  base: number;
  perToken: number;
}

/**
 * Before this device has been measured: an NVIDIA H200 ran a forward over k
 * tokens in about 115 ms + 2.5 ms a token at a short context (B / A ≈ 0.022);
 * a decode step there took 55 ms at a short context and 123 ms at MemAgent's
 * ~6,400 tokens.
 */
export const PRIOR_COST: CostLine = { base: 0.115, perToken: 0.0025 };

/**
 * The most tokens one pass drafts. On the prior line c(32) ≈ 1.7·c(0), and
 * the best K is 18 for α = 0.9 and 30 for α = 0.95; a longer draft gains
 * little even when nearly all of it is kept (E(K) / c(K) stays below
 * 1 / B), the line was measured only up to 32 drafted tokens, and a long
 * pass holds up streaming and a pause by a whole forward.
 */
export const MAX_DRAFT = 32;

export interface DraftLengthOptions {
  /** Pseudo-counts of kept and rejected drafted tokens before any pass: Beta(1, 1), α̂ = 0.5 at first. */
  priorKept: number;
  priorRejected: number;
  /** Weight each pass's acceptance count keeps after the next pass. */
  acceptanceMemory: number;
  /** Weight each pass's timing keeps after the next timed pass (verify passes and decode steps alike). */
  costMemory: number;
  /** The shape (B / A) assumed before two draft lengths have been timed. */
  priorCost: CostLine;
  /** Weight of the prior line, in passes, once timings exist. */
  priorWeight: number;
}

/**
 * Acceptance forgets fast (0.9 a pass, about ten passes remembered): drafts
 * are right in runs, where the memory is copied over, and wrong where new
 * content is written, so α should follow the text. Timings forget slowly
 * (0.98, about fifty passes): a pass's cost moves only as the context grows,
 * and averaging many passes smooths timer and scheduling noise. The prior
 * line weighs one pass, about 2 % of a full memory of timings: it only fixes
 * the slope while a single draft length has been timed.
 */
export const DRAFT_LENGTH_DEFAULTS: DraftLengthOptions = {
  priorKept: 1,
  priorRejected: 1,
  acceptanceMemory: 0.9,
  costMemory: 0.98,
  priorCost: PRIOR_COST,
  priorWeight: 1,
};

/** Expected tokens written by a pass drafting k, each position kept with probability α until the first rejection. */
export function expectedWritten(alpha: number, k: number): number {
  if (alpha >= 1) return k + 1;
  return (1 - alpha ** (k + 1)) / (1 - alpha);
}

/** The K in [1, cap] with the most expected tokens per second; the smaller one on a tie. */
export function bestDraft(alpha: number, cost: CostLine, cap: number): number {
  let best = 1;
  let bestRate = -Infinity;
  for (let k = 1; k <= Math.max(1, Math.floor(cap)); k++) {
    const rate = expectedWritten(alpha, k) / Math.max(cost.base + cost.perToken * k, Number.MIN_VALUE);
    if (rate > bestRate) {
      best = k;
      bestRate = rate;
    }
  }
  return best;
}

/** Weighted sums of (x, y) points, enough for a least-squares line. */
export interface LineSums {
  w: number;
  x: number;
  y: number;
  xx: number;
  xy: number;
}

const NO_SUMS: LineSums = { w: 0, x: 0, y: 0, xx: 0, xy: 0 };

/** A point of a least-squares fit, of weight `w` (1 where not given). */
export interface WeightedPoint {
  x: number;
  y: number;
  w?: number;
}

/** `sums` with `point` added, every earlier point's weight first multiplied by `keep`. */
export function addPoint(sums: LineSums, point: WeightedPoint, keep = 1): LineSums {
  const { x, y, w = 1 } = point;
  return { w: sums.w * keep + w, x: sums.x * keep + w * x, y: sums.y * keep + w * y, xx: sums.xx * keep + w * x * x, xy: sums.xy * keep + w * x * y };
}

/** The weighted least-squares line through the summed points; undefined where they do not span two x values. */
export function fitSums(s: LineSums): CostLine | undefined {
  const det = s.w * s.xx - s.x * s.x;
  if (!(s.w > 0) || !(det > 1e-12 * s.w * s.xx)) return undefined;
  const perToken = (s.w * s.xy - s.x * s.y) / det;
  return { base: (s.y - perToken * s.x) / s.w, perToken };
}

/** The weighted least-squares line through `points`. */
export function fitLine(points: readonly WeightedPoint[]): CostLine | undefined {
  return fitSums(points.reduce<LineSums>((s, p) => addPoint(s, p), NO_SUMS));
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
  alpha: number;
  cost: CostLine;
  /** Seconds of a plain decode step, where one was timed. */
  decode?: number;
  verifyPasses: number;
  decodeSteps: number;
}

/**
 * The draft length for the next pass, learnt across the passes of every
 * request that shares it (one per run, so that a read's later steps start
 * from what its earlier ones measured). Pure: it is fed numbers, never reads
 * a clock.
 */
export class DraftLength {
  private kept = 0;
  private rejected = 0;
  private sums: LineSums = NO_SUMS;
  private decode = { w: 0, y: 0 };
  private verifyPasses = 0;
  private decodeSteps = 0;
  private readonly options: DraftLengthOptions;

  constructor(options: Partial<DraftLengthOptions> = {}) {
    this.options = { ...DRAFT_LENGTH_DEFAULTS, ...options };
  }

  /** Learns from one verify pass. */
  observePass(pass: PassObservation): void {
    if (pass.drafted <= 0) return;
    const { acceptanceMemory, costMemory } = this.options;
    const rejected = pass.rejected ?? pass.accepted < pass.drafted;
    this.kept = this.kept * acceptanceMemory + pass.accepted;
    this.rejected = this.rejected * acceptanceMemory + (rejected ? 1 : 0);
    this.verifyPasses++;
    if (pass.seconds !== undefined && Number.isFinite(pass.seconds) && pass.seconds >= 0) {
      this.sums = addPoint(this.sums, { x: pass.drafted, y: pass.seconds }, costMemory);
    }
  }

  /** Learns from one plain decode step's wall time. */
  observeDecode(seconds: number): void {
    if (!Number.isFinite(seconds) || seconds < 0) return;
    const keep = this.options.costMemory;
    this.decode = { w: this.decode.w * keep + 1, y: this.decode.y * keep + seconds };
    this.decodeSteps++;
  }

  /** α̂: the kept share of drafted positions reached, with the prior's pseudo-counts. */
  get alpha(): number {
    const { priorKept, priorRejected } = this.options;
    return (this.kept + priorKept) / (this.kept + this.rejected + priorKept + priorRejected);
  }

  /**
   * c(k) fitted to the timed passes, with the prior line scaled to their
   * level as two light pseudo-points, one spread (at least one token) either
   * side of their mean k: so they pull the slope only by their share of the
   * weight, and with a single draft length timed the slope is the prior's.
   */
  cost(): CostLine {
    const { priorCost: p, priorWeight } = this.options;
    const s = this.sums;
    if (s.w <= 0) return p;
    const scale = s.y / (p.base * s.w + p.perToken * s.x);
    const mean = s.x / s.w;
    const spread = Math.max(1, Math.sqrt(Math.max(0, s.xx / s.w - mean * mean)));
    let withPrior = s;
    for (const x of [mean - spread, mean + spread]) withPrior = addPoint(withPrior, { x, y: scale * (p.base + p.perToken * x), w: priorWeight / 2 });
    const fit = fitSums(withPrior);
    if (!fit || !Number.isFinite(fit.base) || !Number.isFinite(fit.perToken)) return { base: scale * p.base, perToken: scale * p.perToken };
    // Noise can tilt the line downwards; then longer drafts cost nothing extra, as far as the data tells.
    if (fit.perToken < 0) return { base: withPrior.y / withPrior.w, perToken: 0 };
    return { base: Math.max(0, fit.base), perToken: fit.perToken };
  }

  /** The K for the next pass, in [1, cap]. */
  next(cap: number = MAX_DRAFT): number {
    return bestDraft(this.alpha, this.cost(), cap);
  }

  estimate(): DraftEstimate {
    return {
      alpha: this.alpha,
      cost: this.cost(),
      ...(this.decode.w > 0 && { decode: this.decode.y / this.decode.w }),
      verifyPasses: this.verifyPasses,
      decodeSteps: this.decodeSteps,
    };
  }
}
