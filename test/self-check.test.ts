import { describe, expect, it } from 'vitest';
import { drawFrom, samplingDistribution, type Sampling } from '../src/core/speculative';
import {
  compareGreedy,
  compareSampling,
  type Sampler,
  SELF_CHECK_DRAFT,
  SELF_CHECK_TOKENS,
  selfCheck,
  topMargin,
} from '../src/engines/webllm/check/self-check';
import type { SpeculationPlan } from '../src/engines/webllm/driver/speculate';

const READ: Sampling = { temperature: 0.7, topP: 0.95 };
/** A row of logits with a clear order: token i's logit falls with i. */
const row = Float32Array.from({ length: 64 }, (_, i) => 3 - i * 0.25);

/** A sampler that draws by the app's own distribution, as a WebLLM that agrees would. */
const agreeing: Sampler = (logits, sampling, u) => drawFrom(samplingDistribution(logits, sampling), u);

describe('the self-check’s greedy comparison', () => {
  it('is exact for the same tokens, and a mismatch where they differ at a clear margin', () => {
    expect(compareGreedy([1, 2, 3], [1, 2, 3], new Map()).same).toBe(true);
    const differ = compareGreedy([1, 2, 3], [1, 2, 4], new Map([[2, 0.5]]));
    expect(differ).toEqual({ same: false, words: expect.stringContaining('different at token 3') });
    expect(compareGreedy([], [], new Map()).same).toBe(false);
  });

  it('counts a difference where the two best logits are within 1e-4 as a tie', () => {
    const tie = compareGreedy([1, 2, 3, 9], [1, 2, 4, 7], new Map([[2, 5e-5]]));
    expect(tie.same).toBe(true);
    expect(tie.words).toContain('tie within 0.0001');
  });

  it('measures the margin between the two best logits', () => {
    expect(topMargin([0.1, 2, 1.5, -3])).toBeCloseTo(0.5, 9);
  });
});

describe('the self-check’s sampling comparison', () => {
  it('agrees with a sampler that draws from the same distribution', () => {
    expect(compareSampling(row, READ, agreeing)).toBeUndefined();
  });

  it('finds a sampler whose nucleus is not renormalised (it draws u·top-p over the whole distribution)', () => {
    const unnormalised: Sampler = (logits, sampling, u) => {
      const whole = samplingDistribution(logits, { temperature: sampling.temperature, topP: 1 });
      const order = Array.from(whole.ids, (id, i) => ({ id, p: whole.probs[i]! })).sort((a, b) => b.p - a.p);
      let cumulative = 0;
      for (const { id, p } of order) if ((cumulative += p) >= u * sampling.topP) return id;
      return order.at(-1)!.id;
    };
    expect(compareSampling(row, READ, unnormalised)).toMatch(/^WebLLM drew token \d+ at 0\.\d{4} where the app's distribution gives token \d+/);
  });

  it('finds a sampler at another temperature', () => {
    const hotter: Sampler = (logits, sampling, u) => agreeing(logits, { ...sampling, temperature: sampling.temperature * 1.2 }, u);
    expect(compareSampling(row, READ, hotter)).toBeDefined();
  });
});

describe('the self-check', () => {
  const plain = Array.from({ length: SELF_CHECK_TOKENS }, (_, i) => (i * 7) % 50);

  it('writes the continuation plainly, then in verify passes drafted from it, and compares sampling on the passes’ logits', async () => {
    const plans: (SpeculationPlan | undefined)[] = [];
    const write = async (plan?: SpeculationPlan) => {
      plans.push(plan);
      // A pass's rows, as the decoder hands them over: one per position it decides.
      for (let i = 1; plan && i < 4; i++) plan.onLogits?.(i, row.slice());
      return [...plain];
    };
    const outcome = await selfCheck({ write, sampler: agreeing, sampling: READ });
    expect(outcome.verdict).toBe('exact');
    expect(outcome.compared).toMatch(
      /greedy: 48 tokens .* the same tokens; sampling at temperature 0\.7 and top-p 0\.95 on 3 rows of logits: the same within 0\.001/,
    );
    expect(plans[0]).toBeUndefined();
    expect(plans[1]?.maxDraft).toBe(SELF_CHECK_DRAFT);
    expect(plans[1]?.draft?.(plain.slice(0, 5))).toEqual(plain.slice(5));
  });

  it('is a mismatch when sampling differs, even where the greedy tokens agree, and says what differed', async () => {
    const write = async (plan?: SpeculationPlan) => {
      plan?.onLogits?.(1, row.slice());
      return [...plain];
    };
    const hotter: Sampler = (logits, sampling, u) => agreeing(logits, { ...sampling, temperature: 1.5 }, u);
    const outcome = await selfCheck({ write, sampler: hotter, sampling: READ });
    expect(outcome.verdict).toBe('mismatch');
    expect(outcome.compared).toContain('WebLLM drew token');
  });

  it('says when sampling could not be compared', async () => {
    const write = async (plan?: SpeculationPlan) => {
      plan?.onLogits?.(1, row.slice());
      return [...plain];
    };
    const outcome = await selfCheck({ write, sampling: READ });
    expect(outcome).toEqual({ verdict: 'exact', compared: expect.stringContaining('sampling: not compared') });
  });

  it('is no proof where the reply left no room for a verify pass: speculation stays off', async () => {
    const outcome = await selfCheck({ write: async () => [4, 9], sampler: agreeing, sampling: READ });
    expect(outcome).toEqual({ verdict: 'mismatch', compared: 'greedy: 2 tokens written, too few for a verify pass: nothing compared' });
  });
});
