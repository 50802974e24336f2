import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { bestDraft, DraftLength, expectedWritten, fitLine, MAX_DRAFT, PRIOR_COST, PRIOR_DECODE } from '../src/core/draft-length';

/** Expected tokens written by a pass drafting k, summed over every outcome: j kept, then a rejection (or the bonus). */
function bruteForce(kept: readonly number[], k: number): number {
  let expected = 0;
  let survive = 1;
  for (let j = 0; j < k; j++) {
    expected += survive * (1 - kept[j]!) * (j + 1);
    survive *= kept[j]!;
  }
  return expected + survive * (k + 1);
}

/** A pass on the H200's line: 115 ms + 2.5 ms a drafted token. */
const priorSeconds = (k: number) => PRIOR_COST.base + PRIOR_COST.perToken * k;
const rates = fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { minLength: MAX_DRAFT, maxLength: MAX_DRAFT });

describe('the expected tokens a pass writes', () => {
  it('matches the sum over every outcome of the kept rates per drafted position', () => {
    fc.assert(
      fc.property(rates, fc.integer({ min: 0, max: MAX_DRAFT }), (kept, k) => {
        expect(expectedWritten(kept, k)).toBeCloseTo(bruteForce(kept, k), 9);
      }),
    );
  });

  it('is one with nothing kept and k + 1 with everything kept', () => {
    expect(expectedWritten(Array(MAX_DRAFT).fill(0), 7)).toBe(1);
    expect(expectedWritten(Array(MAX_DRAFT).fill(1), 7)).toBe(8);
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
  it('is plain decoding (0) when no drafted token is ever kept', () => {
    fc.assert(
      fc.property(fc.double({ min: 0.001, max: 1, noNaN: true }), fc.double({ min: 0, max: 1, noNaN: true }), (base, perToken) => {
        expect(bestDraft(Array(MAX_DRAFT).fill(0), { verify: { base, perToken }, decode: base }, MAX_DRAFT)).toBe(0);
      }),
    );
  });

  it('is the cap when a drafted token costs next to nothing and all are kept', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: MAX_DRAFT }), (cap) => {
        expect(bestDraft(Array(MAX_DRAFT).fill(1), { verify: { base: 0.1, perToken: 1e-9 }, decode: 0.1 }, cap)).toBe(cap);
      }),
    );
  });

  it('maximises the expected tokens a second over every K from 0 to the cap', () => {
    fc.assert(
      fc.property(
        rates,
        fc.double({ min: 0.01, max: 1, noNaN: true }),
        fc.double({ min: 0, max: 0.1, noNaN: true }),
        fc.double({ min: 0.005, max: 1, noNaN: true }),
        fc.integer({ min: 0, max: MAX_DRAFT }),
        (kept, base, perToken, decode, cap) => {
          const rate = (k: number) => (k === 0 ? 1 / decode : expectedWritten(kept, k) / (base + perToken * k));
          const k = bestDraft(kept, { verify: { base, perToken }, decode }, cap);
          expect(k).toBeGreaterThanOrEqual(0);
          expect(k).toBeLessThanOrEqual(cap);
          for (let j = 0; j <= cap; j++) expect(rate(j)).toBeLessThanOrEqual(rate(k) * (1 + 1e-9));
        },
      ),
    );
  });
});

describe('a draft length learnt from passes', () => {
  it('starts from the prior: plain decoding, since half of each position kept does not pay on the H200’s costs', () => {
    const tuner = new DraftLength();
    expect(tuner.keptRates().every((h) => h === 0.5)).toBe(true);
    expect(tuner.cost()).toEqual(PRIOR_COST);
    expect(tuner.decodeCost()).toBe(PRIOR_DECODE);
    expect(tuner.next()).toBe(0);
  });

  it('grows K to the cap when every drafted token is kept, and goes back to plain decoding when none is', () => {
    fc.assert(
      // Acceptance remembers about ten passes, so a hundred wrong ones leave little of the right ones.
      // Two drafted tokens at least: on the H200's costs a pass of one never beats two plain steps.
      fc.property(fc.integer({ min: 2, max: MAX_DRAFT }), fc.integer({ min: 100, max: 150 }), (cap, passes) => {
        const tuner = new DraftLength();
        for (let i = 0; i < passes; i++) {
          const k = Math.max(1, tuner.next(cap));
          tuner.observePass({ drafted: k, accepted: k, seconds: priorSeconds(k) });
        }
        expect(tuner.next(cap)).toBe(cap);
        for (let i = 0; i < passes; i++) {
          const k = Math.max(1, tuner.next(cap));
          tuner.observePass({ drafted: k, accepted: 0, seconds: priorSeconds(k) });
        }
        expect(tuner.next(cap)).toBe(0);
      }),
    );
  });

  it('counts a pass that stopped on a kept token as no rejection: the position after it was never reached', () => {
    const stopped = new DraftLength();
    const rejected = new DraftLength();
    stopped.observePass({ drafted: 8, accepted: 3, rejected: false });
    rejected.observePass({ drafted: 8, accepted: 3 });
    expect(stopped.keptRates()[3]).toBeGreaterThan(rejected.keptRates()[3]!);
    expect(stopped.keptRates().slice(0, 3)).toEqual(rejected.keptRates().slice(0, 3));
  });

  it('counts what passes wrote, not a kept share per token: bursty drafts that keep 23 % of tokens pay', () => {
    // Each pass drafts 8: one in four is a long copy (all kept), the rest are wrong at their first token.
    const tuner = new DraftLength();
    for (let i = 0; i < 40; i++) tuner.observePass({ drafted: 8, accepted: i % 4 === 0 ? 8 : 0, seconds: priorSeconds(8) });
    // A decode step at MemAgent's context on the H200: 123 ms.
    for (let i = 0; i < 40; i++) tuner.observeDecode(0.123);
    const { alpha, written } = tuner.estimate();
    expect(alpha).toBeLessThan(0.3);
    // A geometric model with that share would expect (1 − α⁹) / (1 − α) ≈ 1.3 tokens a pass; the passes wrote 3.
    expect(written[8]).toBeGreaterThan(2);
    expect(tuner.next()).toBeGreaterThan(0);
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

  it('scales the prior by what was timed: the verify line from decode steps, the decode step from verify passes', () => {
    const fromDecode = new DraftLength();
    fromDecode.observeDecode(2 * PRIOR_DECODE);
    expect(fromDecode.cost().base).toBeCloseTo(2 * PRIOR_COST.base, 9);
    const fromPasses = new DraftLength();
    for (let i = 0; i < 5; i++) fromPasses.observePass({ drafted: 4, accepted: 2, seconds: 3 * priorSeconds(4) });
    expect(fromPasses.cost().perToken).toBeCloseTo(3 * PRIOR_COST.perToken, 9);
    expect(fromPasses.decodeCost()).toBeCloseTo(3 * PRIOR_DECODE, 9);
  });

  it('learns from drafts compared with what plain decoding writes, at no pass’s cost', () => {
    const tuner = new DraftLength();
    tuner.shadow([1, 2, 3, 4]);
    expect(tuner.shadowing).toBe(true);
    for (const t of [1, 2, 3]) tuner.observeWritten(t);
    tuner.observeWritten(9); // the fourth is not what was written: the draft ends there
    expect(tuner.shadowing).toBe(false);
    expect(tuner.estimate()).toMatchObject({ verifyPasses: 0, shadowPasses: 1 });
    expect(tuner.keptRates()[0]).toBeGreaterThan(0.5);
    expect(tuner.keptRates()[3]).toBeLessThan(tuner.keptRates()[2]!);
  });
});

/**
 * A stand-in for a reply and its drafts: each position is either inside a
 * copied span (then a draft from there is right up to the span's end) or
 * not (a draft is wrong at once). A pass costs the H200's line, a plain
 * step 55 ms, on a stand-in clock.
 */
function simulate(copied: (n: number) => number, length: number): { seconds: number; plainSeconds: number; choices: number[] } {
  const tuner = new DraftLength();
  let seconds = 0;
  const choices: number[] = [];
  /** The draft from position n: right for as long as the copied span lasts, then wrong. */
  const draftAt = (n: number, k: number) => Array.from({ length: k }, (_, j) => (j < copied(n) ? n + j : -1));
  for (let n = 0; n < length;) {
    const k = tuner.next(MAX_DRAFT);
    choices.push(k);
    if (k === 0) {
      if (!tuner.shadowing) tuner.shadow(draftAt(n, MAX_DRAFT));
      seconds += PRIOR_DECODE;
      tuner.observeDecode(PRIOR_DECODE);
      tuner.observeWritten(n);
      n++;
      continue;
    }
    const accepted = Math.min(k, copied(n));
    seconds += priorSeconds(k);
    tuner.observePass({ drafted: k, accepted, seconds: priorSeconds(k) });
    n += accepted + 1;
  }
  return { seconds, plainSeconds: length * PRIOR_DECODE, choices };
}

/** Copied spans of `span` tokens starting every `every` tokens from `from` on; nothing copied elsewhere. */
const spans =
  (span: number, every: number, from = 0) =>
  (n: number) =>
    n < from ? 0 : Math.max(0, span - ((n - from) % every));

describe('the draft length on a stand-in clock', () => {
  it('with acceptance well below break-even, settles on plain decoding within a few passes and stays within 5 % of its time', () => {
    // Two-token copies every 40 tokens: a pass would write about 1.05 tokens for the price of two decode steps.
    const run = simulate(spans(2, 40), 1000);
    expect(run.choices.slice(5).every((k) => k === 0)).toBe(true);
    expect(run.seconds).toBeLessThanOrEqual(1.05 * run.plainSeconds);
  });

  it('with acceptance above break-even, speculates and is faster than plain decoding', () => {
    // Copies of 18 tokens every 20: the memory carried over, with a new fact between.
    const run = simulate(spans(18, 20), 1000);
    expect(run.choices.filter((k) => k > 0).length).toBeGreaterThan(run.choices.length / 2);
    expect(run.seconds).toBeLessThan(0.8 * run.plainSeconds);
  });

  it('finds copying again when the text changes: plain decoding over new text, then drafts as soon as copying starts', () => {
    const from = 500;
    const tuner = simulate(spans(30, 32, from), 1200);
    // Passes before the copying starts are plain (one a token); the first drafting pass comes a few tokens into it.
    const firstDraft = tuner.choices.findIndex((k) => k > 0);
    expect(firstDraft).toBeGreaterThanOrEqual(from - 5);
    expect(firstDraft).toBeLessThan(from + 10);
    expect(tuner.choices.slice(from).filter((k) => k > 0).length).toBeGreaterThan(10);
    expect(tuner.seconds).toBeLessThan(tuner.plainSeconds);
  });
});
