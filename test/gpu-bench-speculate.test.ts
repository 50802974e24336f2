import { describe, expect, it } from 'vitest';
import { DraftLength, MAX_DRAFT } from '../src/core/draft-length';
import { DEFAULT_FIXED_DRAFT, describeSpeculation, planFor, type SpeculationRecord, type WritingFigure } from '../bench/gpu/speculate';

const PLAIN = [5, 6, 7, 8, 9, 10, 11, 12, 13, 14];

describe('the GPU bench’s draft length', () => {
  it('is chosen per pass for ngram without --draft, and fixed with it', () => {
    const adaptive = planFor({ kind: 'ngram' }, PLAIN, undefined);
    expect(adaptive.tuner).toBeInstanceOf(DraftLength);
    expect(adaptive.maxDraft).toBe(MAX_DRAFT);
    const fixed = planFor({ kind: 'ngram' }, PLAIN, 5);
    expect(fixed.tuner).toBeUndefined();
    expect(fixed.maxDraft).toBe(5);
  });

  it('stays fixed for the oracle and partly right drafts: 8 without --draft', () => {
    const oracle = planFor({ kind: 'oracle' }, PLAIN, undefined);
    expect(oracle.tuner).toBeUndefined();
    expect(oracle.maxDraft).toBe(DEFAULT_FIXED_DRAFT);
    expect(oracle.draft!([5, 6])).toEqual(PLAIN.slice(2, 2 + DEFAULT_FIXED_DRAFT));
    const partial = planFor({ kind: 'partial', share: 0.5 }, PLAIN, 3);
    expect(partial.maxDraft).toBe(3);
    expect(partial.draft!([])).toEqual([6, 6, 8]); // every other one made wrong
  });

  it('says which K each mode drafted with', () => {
    const figure: WritingFigure = {
      written: 10,
      passes: 4,
      drafted: 12,
      accepted: 6,
      passesPerToken: 0.5,
      acceptedPerPass: 1.5,
      draftedPerPass: 3,
      seconds: 1,
      finishReason: 'length',
    };
    const tuner = new DraftLength();
    tuner.observePass({ drafted: 4, accepted: 4, seconds: 0.125 });
    const record: SpeculationRecord = {
      maxTokens: 10,
      context: 100,
      plain: figure,
      plainTokens: PLAIN,
      modes: [
        { mode: 'ngram', draft: { adaptive: { ...tuner.estimate(), cap: MAX_DRAFT, next: tuner.next() } }, ...figure, speculativeTokens: PLAIN, same: true },
        { mode: 'oracle', draft: { fixed: 8 }, ...figure, speculativeTokens: PLAIN, same: true },
      ],
      verifyCost: [],
    };
    const lines = describeSpeculation(record).join('\n');
    expect(lines).toContain('K per mode');
    expect(lines).toContain('3 per pass');
    expect(lines).toMatch(/K adaptive up to 32 \(at the end: α 0\.83, pass [\d.]+ ms \+ [\d.]+ ms a drafted token, next K \d+\)/);
    expect(lines).toContain('K = 8');
  });
});
