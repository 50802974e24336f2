/**
 * What a forward pass costs, learned from timed ones: a verify pass drafting
 * K tokens c(K) = A + B·K seconds (a weighted least-squares line through the
 * timed passes, leaning on a prior line's shape), a plain decode step d. Pure:
 * it is fed numbers, never reads a clock.
 */

/** Seconds of one verify pass drafting k tokens: base + perToken·k. */
export interface CostLine {
  base: number;
  perToken: number;
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

/** What PassCosts starts from and how fast it forgets (see DraftLengthOptions). */
export interface CostOptions {
  /** Weight each timing keeps after the next one of its kind (verify passes, decode steps). */
  costMemory: number;
  /** The shape of the cost line and the plain step's cost before any timing: only their ratios matter once timed. */
  priorCost: CostLine;
  priorDecode: number;
  /** Weight of the prior line, in passes, once timings exist. */
  priorPasses: number;
}

/**
 * What a verify pass and a plain decode step cost, learned from timed ones:
 * c(K) = A + B·K for a pass drafting K (a weighted least-squares line), and d
 * for a plain step. A batch learns its own (K counted over its members).
 */
export class PassCosts {
  private sums: LineSums = NO_SUMS;
  private decode = { w: 0, y: 0 };

  constructor(private readonly options: CostOptions) {}

  /** A timed verify pass that drafted `drafted` tokens. */
  observePass(drafted: number, seconds: number): void {
    if (!Number.isFinite(seconds) || seconds < 0) return;
    this.sums = addPoint(this.sums, { x: drafted, y: seconds }, this.options.costMemory);
  }

  /** A timed plain decode step; false where the time is no time (not finite, negative). */
  observeDecode(seconds: number): boolean {
    if (!Number.isFinite(seconds) || seconds < 0) return false;
    const keep = this.options.costMemory;
    this.decode = { w: this.decode.w * keep + 1, y: this.decode.y * keep + seconds };
    return true;
  }

  /**
   * c(k) fitted to the timed passes, with the prior line scaled to their
   * level as two light pseudo-points either side of their mean k; with no
   * timed pass, the prior line scaled by the decode steps' level.
   */
  cost(): CostLine {
    const { priorCost: p, priorPasses, priorDecode } = this.options;
    const s = this.sums;
    if (s.w <= 0) {
      const scale = this.decode.w > 0 ? this.decode.y / this.decode.w / priorDecode : 1;
      return { base: scale * p.base, perToken: scale * p.perToken };
    }
    const scale = this.verifyScale();
    const mean = s.x / s.w;
    const spread = Math.max(1, Math.sqrt(Math.max(0, s.xx / s.w - mean * mean)));
    let withPrior = s;
    for (const x of [mean - spread, mean + spread]) withPrior = addPoint(withPrior, { x, y: scale * (p.base + p.perToken * x), w: priorPasses / 2 });
    const fit = fitSums(withPrior);
    if (!fit || !Number.isFinite(fit.base) || !Number.isFinite(fit.perToken)) return { base: scale * p.base, perToken: scale * p.perToken };
    // Noise can tilt the line downwards; then longer drafts cost nothing extra, as far as the data tells.
    if (fit.perToken < 0) return { base: withPrior.y / withPrior.w, perToken: 0 };
    return { base: Math.max(0, fit.base), perToken: fit.perToken };
  }

  /** Seconds of a plain step: measured, else the prior's ratio to the timed verify passes. */
  decodeCost(): number {
    if (this.decode.w > 0) return this.decode.y / this.decode.w;
    return (this.sums.w > 0 ? this.verifyScale() : 1) * this.options.priorDecode;
  }

  private verifyScale(): number {
    const { priorCost: p } = this.options;
    return this.sums.y / (p.base * this.sums.w + p.perToken * this.sums.x);
  }
}
