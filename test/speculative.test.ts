import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DEFAULT_LOOKUP, lookupDraft } from '../src/core/prompt-lookup';
import { replyRandom, seededRandom } from '../src/core/random';
import { applyPenalties, decide, type Distribution, probability, samplingDistribution, verifyPass } from '../src/core/speculative';

/** A distribution over 0..weights.length-1 with probabilities proportional to `weights` (zeros left out). */
function fromWeights(weights: readonly number[]): Distribution {
  const sum = weights.reduce((a, b) => a + b, 0);
  const ids = weights.flatMap((w, i) => (w > 0 ? [i] : []));
  return { ids, probs: ids.map((i) => weights[i]! / sum) };
}

/**
 * The cells of [0, 1) on which one decision's outcome cannot change, for the
 * rule as it is usually stated (keep with p(x), else draw from the rest: cut
 * where the kept probability ends and at every cumulative sum of the rest)
 * and for a plain draw from p (cut at its cumulative sums): cut at both, so
 * that the law found does not depend on which way the rule draws.
 */
function cells(p: Distribution, x: number | undefined): [mid: number, width: number][] {
  const keep = x === undefined ? 0 : probability(p, x);
  const cuts = [0, 1];
  if (keep > 0) cuts.push(keep);
  let sum = keep;
  let plain = 0;
  for (let i = 0; i < p.ids.length; i++) {
    plain += p.probs[i]!;
    cuts.push(Math.min(1, plain));
    if (p.ids[i] === x) continue;
    sum += p.probs[i]!;
    cuts.push(Math.min(1, sum));
  }
  const sorted = [...new Set(cuts)].sort((a, b) => a - b);
  const out: [number, number][] = [];
  for (let i = 1; i < sorted.length; i++) if (sorted[i]! > sorted[i - 1]!) out.push([(sorted[i]! + sorted[i - 1]!) / 2, sorted[i]! - sorted[i - 1]!]);
  return out;
}

class NeedsDraw {
  constructor(
    readonly p: Distribution,
    readonly x: number | undefined,
  ) {}
}

/**
 * The exact law of a computation that draws uniform numbers only inside
 * decisions on (p, x): every branch is followed, weighted by its cell's width.
 */
function exactLaw(run: (random: () => number, at: (p: Distribution, x: number | undefined) => void) => string): Map<string, number> {
  const law = new Map<string, number>();
  const explore = (script: number[], weight: number) => {
    let k = 0;
    let current: NeedsDraw | undefined;
    const random = () => {
      if (k < script.length) return script[k++]!;
      throw current!;
    };
    try {
      const outcome = run(random, (p, x) => (current = new NeedsDraw(p, x)));
      law.set(outcome, (law.get(outcome) ?? 0) + weight);
    } catch (e) {
      if (!(e instanceof NeedsDraw)) throw e;
      for (const [mid, width] of cells(e.p, e.x)) explore([...script, mid], weight * width);
    }
  };
  explore([], 1);
  return law;
}

const VOCAB = 3;
const weightsArb = fc.array(fc.nat(4), { minLength: VOCAB, maxLength: VOCAB }).filter((w) => w.some((v) => v > 0));

describe('the acceptance rule for one drafted token', () => {
  it('writes each token with exactly its probability under p, whatever was drafted', () => {
    fc.assert(
      fc.property(
        fc.array(fc.nat(6), { minLength: 1, maxLength: 5 }).filter((w) => w.some((v) => v > 0)),
        fc.option(fc.nat(5), { nil: undefined }),
        (weights, x) => {
          const p = fromWeights(weights);
          const law = exactLaw((random, at) => {
            at(p, x);
            return String(decide(p, x, random).token);
          });
          for (let t = 0; t < weights.length + 1; t++) expect(law.get(String(t)) ?? 0).toBeCloseTo(probability(p, t), 12);
        },
      ),
    );
  });

  it('keeps the drafted token with probability p(x), and at temperature 0 only the most likely one, drawing nothing', () => {
    const p = fromWeights([1, 3]);
    const law = exactLaw((random, at) => {
      at(p, 1);
      return String(decide(p, 1, random).accepted);
    });
    expect(law.get('true')).toBeCloseTo(0.75, 12);
    const greedy = samplingDistribution([0.1, 2, -1], { temperature: 0, topP: 1 });
    const never = () => {
      throw new Error('drew a number');
    };
    expect(decide(greedy, 1, never)).toEqual({ token: 1, accepted: true });
    expect(decide(greedy, 0, never)).toEqual({ token: 1, accepted: false });
    expect(decide(greedy, undefined, never)).toEqual({ token: 1, accepted: false });
  });
});

describe('speculative writing as a whole', () => {
  it('writes with given numbers per position the reply plain sampling writes with them, whatever was drafted', () => {
    const prefixes = 1 + VOCAB + VOCAB * VOCAB + VOCAB ** 3;
    fc.assert(
      fc.property(
        fc.array(weightsArb, { minLength: prefixes, maxLength: prefixes }),
        fc.array(fc.array(fc.nat(VOCAB - 1), { maxLength: 3 }), { minLength: prefixes, maxLength: prefixes }),
        fc.nat(),
        (table, drafts, seed) => {
          const index = (prefix: readonly number[]) => [0, 1, 1 + VOCAB, 1 + VOCAB + VOCAB ** 2][prefix.length]! + prefix.reduce((n, t) => n * VOCAB + t, 0);
          const model = (prefix: readonly number[]) => fromWeights(table[index(prefix)]!);
          const length = 4;
          const write = (drafting: boolean) => {
            const written: number[] = [];
            const random = replyRandom(seed, () => written.length);
            while (written.length < length) {
              const draft = drafting ? drafts[index(written)]!.slice(0, length - written.length - 1) : [];
              verifyPass(
                draft,
                () => model(written),
                (t) => (written.push(t), written.length < length),
                random,
              );
            }
            return written;
          };
          expect(write(true)).toEqual(write(false));
        },
      ),
      { numRuns: 200 },
    );
  });

  it('gives every reply of three tokens exactly the probability plain sampling gives it, for any drafts and any prefix-dependent model', () => {
    const prefixes = 1 + VOCAB + VOCAB * VOCAB;
    fc.assert(
      fc.property(
        fc.array(weightsArb, { minLength: prefixes, maxLength: prefixes }),
        fc.array(fc.array(fc.nat(VOCAB - 1), { maxLength: 3 }), { minLength: prefixes, maxLength: prefixes }),
        (table, drafts) => {
          const index = (prefix: readonly number[]) => [0, 1, 1 + VOCAB][prefix.length]! + prefix.reduce((n, t) => n * VOCAB + t, 0);
          const model = (prefix: readonly number[]) => fromWeights(table[index(prefix)]!);
          const length = 3;
          const law = exactLaw((random, at) => {
            const written: number[] = [];
            while (written.length < length) {
              const draft = drafts[index(written)]!.slice(0, length - written.length - 1);
              verifyPass(
                draft,
                (i) => {
                  const p = model(written);
                  at(p, draft[i]);
                  return p;
                },
                (t) => (written.push(t), written.length < length),
                random,
              );
            }
            return written.join('');
          });
          let total = 0;
          for (let s = 0; s < VOCAB ** length; s++) {
            const seq = [Math.floor(s / 9), Math.floor(s / 3) % 3, s % 3];
            const plain = seq.reduce((prob, t, i) => prob * probability(model(seq.slice(0, i)), t), 1);
            total += law.get(seq.join('')) ?? 0;
            expect(law.get(seq.join('')) ?? 0).toBeCloseTo(plain, 12);
          }
          expect(total).toBeCloseTo(1, 12);
        },
      ),
      { numRuns: 60 },
    );
  });

  it('stops a pass at the first rejected draft, or where writing must stop, and counts what it kept', () => {
    const greedy = (token: number): Distribution => ({ ids: [token], probs: [1] });
    const target = [5, 6, 7, 8];
    const written: number[] = [];
    const pass = verifyPass(
      [5, 6, 9, 9],
      (i) => greedy(target[i]!),
      (t) => (written.push(t), true),
      Math.random,
    );
    expect(pass).toEqual({ accepted: 2, written: 3 });
    expect(written).toEqual([5, 6, 7]);
    const all: number[] = [];
    expect(
      verifyPass(
        [5, 6, 7],
        (i) => greedy(target[i]!),
        (t) => (all.push(t), true),
        Math.random,
      ),
    ).toEqual({ accepted: 3, written: 4 });
    expect(all).toEqual([5, 6, 7, 8]); // the bonus token
    const capped: number[] = [];
    expect(
      verifyPass(
        [5, 6, 7],
        (i) => greedy(target[i]!),
        (t) => (capped.push(t), capped.length < 2),
        Math.random,
      ),
    ).toEqual({ accepted: 2, written: 2 });
  });
});

describe('the sampling distribution', () => {
  it('is the tempered softmax, cut to the fewest most likely tokens reaching top_p and renormalised', () => {
    const logits = [Math.log(0.5), Math.log(0.3), Math.log(0.2)];
    const full = samplingDistribution(logits, { temperature: 1, topP: 1 });
    expect(Array.from(full.probs, (p) => +p.toFixed(12))).toEqual([0.5, 0.3, 0.2]);
    const top = samplingDistribution(logits, { temperature: 1, topP: 0.7 });
    expect(top.ids).toEqual([0, 1]);
    expect(top.probs[0]).toBeCloseTo(0.625, 12);
    const hot = samplingDistribution([0, Math.log(4)], { temperature: 2, topP: 1 });
    expect(hot.probs[1]).toBeCloseTo(2 / 3, 12);
    expect(samplingDistribution([1, 3, 3], { temperature: 0, topP: 1 })).toEqual({ ids: [1], probs: [1] });
  });

  it('reads one position of a row of logits', () => {
    expect(samplingDistribution([9, 0, 0, 1, 5, 2], { temperature: 0, topP: 1 }, 3, 3).ids).toEqual([1]);
  });

  it('penalises tokens already written: presence and frequency first, then repetition', () => {
    const logits = [2, -2, 1];
    applyPenalties(
      logits,
      new Map([
        [0, 1],
        [1, 2],
      ]),
      { presence: 0, frequency: 0, repetition: 2 },
    );
    expect(logits).toEqual([1, -4, 1]);
    const freq = [2, 2, 2];
    applyPenalties(freq, new Map([[0, 2]]), { presence: 0.5, frequency: 0.25, repetition: 1 });
    expect(freq).toEqual([1, 2, 2]);
    const both = [3, 2];
    applyPenalties(both, new Map([[0, 1]]), { presence: 1, frequency: 0, repetition: 2 });
    expect(both).toEqual([1, 2]);
  });
});

describe('seeded randomness', () => {
  it('gives one number per reply position: the same for a seed and position however often asked, another for another seed or position', () => {
    let at = 0;
    const a = replyRandom(7, () => at);
    const first = [0, 1, 2, 3].map((i) => ((at = i), a()));
    at = 2;
    expect([a(), a()]).toEqual([first[2], first[2]]);
    expect(new Set(first).size).toBe(4);
    expect(first.every((u) => u >= 0 && u < 1)).toBe(true);
    at = 0;
    expect(replyRandom(8, () => at)()).not.toBe(first[0]);
    expect(replyRandom(7, () => 0)()).toBe(first[0]);
  });

  it('repeats for one seed and differs for another', () => {
    const a = seededRandom(42);
    const b = seededRandom(42);
    const first = Array.from({ length: 5 }, a);
    expect(Array.from({ length: 5 }, b)).toEqual(first);
    expect(Array.from({ length: 5 }, seededRandom(43))).not.toEqual(first);
    expect(first.every((u) => u >= 0 && u < 1)).toBe(true);
  });
});

describe('prompt lookup', () => {
  it('drafts what followed the longest, most recent earlier occurrence of the written tail', () => {
    // prompt: 1 2 3 4 5 6 … 2 3 9; written so far ends in "2 3"
    const prompt = [1, 2, 3, 4, 5, 6, 7, 2, 3, 9, 8];
    expect(lookupDraft(prompt, [1, 2, 3], { maxNgram: 4, minNgram: 1, maxDraft: 3 })).toEqual([4, 5, 6]);
    expect(lookupDraft(prompt, [7, 2, 3], { maxNgram: 4, minNgram: 1, maxDraft: 3 })).toEqual([9, 8, 7]);
    expect(lookupDraft(prompt, [3], { ...DEFAULT_LOOKUP, maxDraft: 2 })).toEqual([9, 8]);
    expect(lookupDraft(prompt, [42], DEFAULT_LOOKUP)).toEqual([]);
    expect(lookupDraft(prompt, [2, 3], { maxNgram: 4, minNgram: 3, maxDraft: 2 })).toEqual([]);
    expect(lookupDraft(prompt, [2, 3], { ...DEFAULT_LOOKUP, maxDraft: 0 })).toEqual([]);
  });

  it('drafts only tokens that followed an occurrence of the tail, at most maxDraft of them', () => {
    fc.assert(
      fc.property(
        fc.array(fc.nat(4), { maxLength: 30 }),
        fc.array(fc.nat(4), { minLength: 1, maxLength: 10 }),
        fc.integer({ min: 1, max: 6 }),
        (prompt, written, k) => {
          const all = [...prompt, ...written];
          const draft = lookupDraft(prompt, written, { maxNgram: 4, minNgram: 1, maxDraft: k });
          expect(draft.length).toBeLessThanOrEqual(k);
          if (!draft.length) {
            expect(all.slice(0, -1)).not.toContain(all[all.length - 1]);
            return;
          }
          const ok = all.some((_, from) => {
            if (from === 0 || from >= all.length) return false;
            return all.slice(from, from + draft.length).join() === draft.join() && all[from - 1] === all[all.length - 1];
          });
          expect(ok).toBe(true);
        },
      ),
    );
  });
});
