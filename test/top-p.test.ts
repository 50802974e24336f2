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

  it('walks every token, as sorting does, where rounding leaves the walk over the bands that reach top-p just short of it', () => {
    // Found by search: 44 weights near the top, one far below, and top-p cutting within rounding of the first 44's sum.
    const row = [
      -0.02452878514304757, -0.2564152671257034, -0.26689791423268616, -0.43577465729322284, -0.1227750291582197, -0.36064551735762507, -0.22650642017833889,
      -0.21950954478234053, -0.03487473295535892, -0.4071767780696973, -0.47703676053788513, -0.4439884377643466, -0.03894408652558923, -0.4379348581423983,
      -0.4370223853038624, -0.15378288773354143, -0.2620481663616374, -0.024745146511122584, -0.045632748981006444, -0.0348574067465961, -0.18196105398237705,
      -0.11143633001483977, -0.403074269881472, -0.46663066907785833, -0.4001780175603926, -0.24233387305866927, -0.11527289799414575, -0.08452446677256376,
      -0.2127383784390986, -0.16904165351297706, -0.31888798263389617, -0.25649697659537196, -0.18885231961030513, -0.08809263515286148, -0.2789792298572138,
      -0.2428007380804047, -0.37514170503709465, -0.4849939016858116, -0.3450244836276397, -0.2992362490622327, -0.16739510267507285, -0.145194964366965,
      -0.17520648089703172, -0.36178946879226714, -30,
    ];
    const sampling = { temperature: 1, topP: 0.9999999999999979 };
    const walked = samplingDistribution(row, sampling);
    expect(walked.ids).toHaveLength(45);
    expectSame(walked, sortingDistribution(row, sampling));
  });

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
