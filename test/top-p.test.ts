import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { seededRandom } from '../src/core/random';
import { type Distribution, drawFrom, probability, type Sampling, samplingDistribution } from '../src/core/speculative';
import { peakedLogits, QWEN_VOCAB, sortingDistribution } from './support/sorting-sampler';

/** The same ids in the same order, and the same probabilities to the bit. */
function expectSame(actual: Distribution, expected: Distribution): void {
  expect(Array.from(actual.ids)).toEqual(Array.from(expected.ids));
  const bits = (p: Distribution) => Array.from(new Float64Array(Float64Array.from(p.probs).buffer), (x) => x.toString(2));
  expect(bits(actual)).toEqual(bits(expected));
}

const SETTINGS: Sampling[] = [
  { temperature: 0.7, topP: 0.95 },
  { temperature: 0.7, topP: 1 },
  { temperature: 0.3, topP: 0.95 },
  { temperature: 1, topP: 0.9 },
  { temperature: 1.5, topP: 0.5 },
  { temperature: 2, topP: 0.999 },
];

describe('the sampling distribution without sorting the vocabulary', () => {
  it('is what sorting every token gives, on random logits with ties, at any temperature and top-p', () => {
    // A few repeated values make ties; anything else is drawn from a wide range.
    const logit = fc.oneof(fc.constantFrom(0, 1, -1, 2.5, -30), fc.double({ min: -60, max: 60, noNaN: true }));
    fc.assert(
      fc.property(
        fc.array(logit, { minLength: 1, maxLength: 80 }),
        fc.constantFrom(0.05, 0.3, 0.7, 1, 1.7),
        fc.constantFrom(0.01, 0.3, 0.5, 0.9, 0.95, 0.999999999, 1),
        fc.boolean(),
        (values, temperature, topP, float32) => {
          const logits = float32 ? Float32Array.from(values) : values;
          expectSame(samplingDistribution(logits, { temperature, topP }), sortingDistribution(logits, { temperature, topP }));
        },
      ),
      { numRuns: 400 },
    );
  });

  it('reads one position of a longer row as the whole computation does', () => {
    const row = [3, 1, 1, 2, 0.5, 1, 9, 9];
    for (const sampling of SETTINGS) expectSame(samplingDistribution(row, sampling, 1, 5), sortingDistribution(row, sampling, 1, 5));
  });

  it('cuts ties at top-p exactly where sorting does: equal weights in id order, the cut where their sum meets it', () => {
    const flat = [0, 0, 0, 0];
    for (const topP of [0.25, 0.5, 0.75, 0.5000001, 0.2499999]) {
      expectSame(samplingDistribution(flat, { temperature: 1, topP }), sortingDistribution(flat, { temperature: 1, topP }));
    }
    expect(Array.from(samplingDistribution(flat, { temperature: 1, topP: 0.5 }).ids)).toEqual([0, 1]);
    expect(Array.from(samplingDistribution([1, 5, 5, 1], { temperature: 1, topP: 0.9 }).ids)).toEqual([1, 2]);
  });

  it('gives the same distribution on rows of Qwen’s vocabulary: a peaked head over a noisy tail, a flat row, and a nucleus reaching into the far tail', () => {
    const random = seededRandom(11);
    const rows = [
      peakedLogits(random, { vocab: QWEN_VOCAB, head: 32, top: 20, step: 0.25, spread: 2.5 }),
      peakedLogits(random, { vocab: QWEN_VOCAB, head: 8, top: 12, step: 1, spread: 3 }),
      peakedLogits(random, { vocab: QWEN_VOCAB, head: 0, top: 0, step: 0, spread: 1 }),
    ];
    for (const row of rows) for (const sampling of SETTINGS.slice(0, 4)) expectSame(samplingDistribution(row, sampling), sortingDistribution(row, sampling));
    // One token far above a vocabulary of equal ones, each weighing e^-30 of it: top-p just short of 1 reaches them.
    const far = new Float32Array(QWEN_VOCAB);
    far[5] = 30;
    const sampling = { temperature: 1, topP: 1 - 1e-9 };
    const reached = samplingDistribution(far, sampling);
    expect(reached.ids.length).toBeGreaterThan(1);
    expectSame(reached, sortingDistribution(far, sampling));
  }, 60_000);

  it('at top-p 1 lists every token of positive weight in id order, and draws and weighs them as sorting’s list does', () => {
    const row = [0.5, -Infinity, 2, 2, -1];
    const whole = samplingDistribution(row, { temperature: 0.8, topP: 1 });
    const reference = sortingDistribution(row, { temperature: 0.8, topP: 1 });
    expectSame(whole, reference);
    expect(Array.from(whole.ids)).toEqual([0, 2, 3, 4]);
    for (let token = -1; token <= row.length; token++) expect(probability(whole, token)).toBe(probability(reference, token));
    for (const u of [0, 0.1, 0.35, 0.5, 0.77, 0.999]) {
      expect(drawFrom(whole, u)).toBe(drawFrom(reference, u));
      expect(drawFrom(whole, u, 2)).toBe(drawFrom(reference, u, 2));
    }
  });

  it('leaves a row with a NaN to the whole computation, as sorting would treat it', () => {
    const row = [1, NaN, 3, 2];
    for (const sampling of SETTINGS) expectSame(samplingDistribution(row, sampling), sortingDistribution(row, sampling));
  });
});
