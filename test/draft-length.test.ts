import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { bestDraft, DraftLength, expectedWritten, fitLine, MAX_DRAFT, PRIOR_COST } from '../src/core/draft-length';

/** Expected tokens written by a pass drafting k, summed over every outcome of the geometric acceptance. */
function bruteForce(alpha: number, k: number): number {
  let expected = 0;
  // j drafted tokens kept, then the (j + 1)-th rejected: j + 1 written.
  for (let j = 0; j < k; j++) expected += alpha ** j * (1 - alpha) * (j + 1);
  // All k kept, then the bonus: k + 1 written.
  return expected + alpha ** k * (k + 1);
}

/** A pass on the H200's line: 115 ms + 2.5 ms a drafted token. */
const priorSeconds = (k: number) => PRIOR_COST.base + PRIOR_COST.perToken * k;

describe('the expected tokens a pass writes', () => {
  it('matches the sum over every outcome of geometric acceptance', () => {
    fc.assert(
      fc.property(fc.double({ min: 0, max: 1, noNaN: true }), fc.integer({ min: 0, max: 12 }), (alpha, k) => {
        expect(expectedWritten(alpha, k)).toBeCloseTo(bruteForce(alpha, k), 9);
      }),
    );
  });

  it('is one with nothing kept and k + 1 with everything kept', () => {
    expect(expectedWritten(0, 7)).toBe(1);
    expect(expectedWritten(1, 7)).toBe(8);
  });
});

describe('the weighted least-squares line', () => {
  it('recovers A and B from exact linear data, whatever the weights', () => {
    const points = fc.uniqueArray(fc.integer({ min: 0, max: 64 }), { minLength: 2, maxLength: 12 });
    const weights = fc.array(fc.double({ min: 0.01, max: 10, noNaN: true }), { minLength: 12, maxLength: 12 });
    fc.assert(
      fc.property(fc.double({ min: 0.001, max: 1, noNaN: true }), fc.double({ min: 0, max: 0.05, noNaN: true }), points, weights, (a, b, xs, ws) => {
        const fit = fitLine(xs.map((x, i) => ({ x, y: a + b * x, w: ws[i]! })))!;
        expect(fit.base).toBeCloseTo(a, 9);
        expect(fit.perToken).toBeCloseTo(b, 9);
      }),
    );
  });

  it('has no line through a single x', () => {
    expect(fitLine([{ x: 4, y: 1 }])).toBeUndefined();
    expect(
      fitLine([
        { x: 4, y: 1 },
        { x: 4, y: 2 },
      ]),
    ).toBeUndefined();
  });
});

describe('the best draft length', () => {
  it('is the cap when a drafted token costs next to nothing and nearly all are kept', () => {
    fc.assert(
      fc.property(fc.double({ min: 0.9, max: 1, noNaN: true }), fc.integer({ min: 1, max: 64 }), (alpha, cap) => {
        expect(bestDraft(alpha, { base: 0.1, perToken: 1e-9 }, cap)).toBe(cap);
      }),
    );
  });

  it('is 1 when no drafted token is ever kept', () => {
    fc.assert(
      fc.property(fc.double({ min: 0.001, max: 1, noNaN: true }), fc.double({ min: 0, max: 1, noNaN: true }), (base, perToken) => {
        expect(bestDraft(0, { base, perToken }, MAX_DRAFT)).toBe(1);
      }),
    );
  });

  it('maximises the expected tokens a second over every K up to the cap', () => {
    fc.assert(
      fc.property(
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.double({ min: 0.01, max: 1, noNaN: true }),
        fc.double({ min: 0, max: 0.1, noNaN: true }),
        fc.integer({ min: 1, max: 40 }),
        (alpha, base, perToken, cap) => {
          const rate = (k: number) => expectedWritten(alpha, k) / (base + perToken * k);
          const k = bestDraft(alpha, { base, perToken }, cap);
          expect(k).toBeGreaterThanOrEqual(1);
          expect(k).toBeLessThanOrEqual(cap);
          for (let j = 1; j <= cap; j++) expect(rate(j)).toBeLessThanOrEqual(rate(k) * (1 + 1e-12));
        },
      ),
    );
  });
});

describe('a draft length learnt from passes', () => {
  it('starts from the prior: α = 0.5 and the H200 line', () => {
    const tuner = new DraftLength();
    expect(tuner.alpha).toBe(0.5);
    expect(tuner.cost()).toEqual(PRIOR_COST);
    expect(tuner.next()).toBe(bestDraft(0.5, PRIOR_COST, MAX_DRAFT));
    expect(tuner.next()).toBeGreaterThan(1);
    expect(tuner.next()).toBeLessThan(MAX_DRAFT);
  });

  it('grows K to the cap when every drafted token is kept, and shrinks it to 1 when none is', () => {
    fc.assert(
      // Acceptance remembers about ten passes, so a hundred wrong ones leave nothing of the right ones.
      fc.property(fc.integer({ min: 1, max: MAX_DRAFT }), fc.integer({ min: 100, max: 150 }), (cap, passes) => {
        const tuner = new DraftLength();
        for (let i = 0; i < passes; i++) {
          const k = tuner.next(cap);
          tuner.observePass({ drafted: k, accepted: k, seconds: priorSeconds(k) });
        }
        expect(tuner.next(cap)).toBe(cap);
        for (let i = 0; i < passes; i++) {
          const k = tuner.next(cap);
          tuner.observePass({ drafted: k, accepted: 0, seconds: priorSeconds(k) });
        }
        expect(tuner.next(cap)).toBe(1);
      }),
    );
  });

  it('picks the cap when drafting costs almost nothing more and nearly everything is kept', () => {
    const tuner = new DraftLength();
    for (let i = 0; i < 30; i++) {
      for (const k of [1, 4]) tuner.observePass({ drafted: k, accepted: k - (i % 10 === 0 ? 1 : 0), seconds: 0.1 + 1e-7 * k });
    }
    expect(tuner.alpha).toBeGreaterThan(0.9);
    expect(tuner.cost().perToken).toBeLessThan(1e-4);
    expect(tuner.next(MAX_DRAFT)).toBe(MAX_DRAFT);
  });

  it('counts a pass that stopped on a kept token as no rejection', () => {
    const stopped = new DraftLength();
    const rejected = new DraftLength();
    stopped.observePass({ drafted: 8, accepted: 3, rejected: false });
    rejected.observePass({ drafted: 8, accepted: 3 });
    expect(stopped.alpha).toBeCloseTo(4 / 5, 12);
    expect(rejected.alpha).toBeCloseTo(4 / 6, 12);
  });

  it('follows the text: after a run of kept drafts, a run of rejected ones brings α down within a few dozen passes', () => {
    const tuner = new DraftLength();
    for (let i = 0; i < 50; i++) tuner.observePass({ drafted: 8, accepted: 8 });
    expect(tuner.alpha).toBeGreaterThan(0.95);
    for (let i = 0; i < 40; i++) tuner.observePass({ drafted: 8, accepted: 0 });
    expect(tuner.alpha).toBeLessThan(0.2);
  });

  it('fits the pass cost to exact timings at two draft lengths, the prior line weighing little', () => {
    fc.assert(
      fc.property(fc.double({ min: 0.01, max: 1, noNaN: true }), fc.double({ min: 0, max: 0.05, noNaN: true }), (a, b) => {
        const tuner = new DraftLength();
        for (let i = 0; i < 60; i++) for (const k of [2, 16]) tuner.observePass({ drafted: k, accepted: 1, seconds: a + b * k });
        const cost = tuner.cost();
        expect(Math.abs(cost.base - a)).toBeLessThan(0.03 * (a + 16 * b));
        expect(Math.abs(cost.perToken - b)).toBeLessThan(0.03 * (a / 16 + b));
      }),
    );
  });

  it('takes the prior line’s shape at the measured level while a single draft length has been timed', () => {
    const tuner = new DraftLength();
    for (let i = 0; i < 5; i++) tuner.observePass({ drafted: 4, accepted: 2, seconds: 2 * priorSeconds(4) });
    const cost = tuner.cost();
    expect(cost.base).toBeCloseTo(2 * PRIOR_COST.base, 9);
    expect(cost.perToken).toBeCloseTo(2 * PRIOR_COST.perToken, 9);
  });

  it('keeps the plain decode step’s time and counts what it has seen', () => {
    const tuner = new DraftLength();
    expect(tuner.estimate().decode).toBeUndefined();
    tuner.observeDecode(0.05);
    tuner.observeDecode(0.05);
    tuner.observePass({ drafted: 3, accepted: 1, seconds: 0.12 });
    tuner.observePass({ drafted: 0, accepted: 0, seconds: 0.12 }); // nothing drafted: not a verify pass
    expect(tuner.estimate()).toMatchObject({ decode: 0.05, verifyPasses: 1, decodeSteps: 2 });
  });
});
