import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BudgetError, type BudgetInput, DEFAULT_CHUNK_TOKENS, MIN_CHUNK_TOKENS, planBudget } from '../src/core/budget';

const base: BudgetInput = { contextWindow: 32_768, templateTokens: 180, questionTokens: 40, memoryTokens: 1024 };

describe('planBudget', () => {
  it('gives the largest chunk that fits beside template, question, memory and reply', () => {
    const input = { ...base, contextWindow: 6000 };
    const fixed = input.templateTokens + input.questionTokens + input.memoryTokens * 2; // reply cap defaults to M
    const plan = planBudget(input);
    expect(plan.chunkTokens).toBe(input.contextWindow - fixed);
    expect(plan.contextTokens).toBe(input.contextWindow);
    expect(plan.outputTokens).toBe(input.memoryTokens);
  });

  it('caps the chunk at the requested size, 5000 tokens when none is asked for', () => {
    expect(DEFAULT_CHUNK_TOKENS).toBe(5000); // the paper's C
    expect(planBudget(base).chunkTokens).toBe(DEFAULT_CHUNK_TOKENS);
    const plan = planBudget({ ...base, requestedChunkTokens: 2000 });
    expect(plan.chunkTokens).toBe(2000);
    // The context a configurable engine should allocate is what the plan uses, not the whole window.
    expect(plan.contextTokens).toBe(base.templateTokens + base.questionTokens + 2 * base.memoryTokens + 2000);
  });

  it('counts an explicit reply cap instead of the memory size', () => {
    const plan = planBudget({ ...base, contextWindow: 6000, outputTokens: 300 });
    expect(plan.outputTokens).toBe(300);
    expect(plan.chunkTokens).toBe(6000 - (base.templateTokens + base.questionTokens + base.memoryTokens + 300));
  });

  it('always fits the window and is as large as allowed (property)', () => {
    fc.assert(
      fc.property(
        fc.record({
          contextWindow: fc.integer({ min: 1000, max: 200_000 }),
          templateTokens: fc.integer({ min: 0, max: 2000 }),
          questionTokens: fc.integer({ min: 0, max: 20_000 }),
          memoryTokens: fc.integer({ min: 1, max: 4096 }),
          outputTokens: fc.option(fc.integer({ min: 1, max: 4096 }), { nil: undefined }),
          requestedChunkTokens: fc.option(fc.integer({ min: 1, max: 20_000 }), { nil: undefined }),
        }),
        (input) => {
          const fixed = input.templateTokens + input.questionTokens + input.memoryTokens + (input.outputTokens ?? input.memoryTokens);
          const requested = input.requestedChunkTokens ?? DEFAULT_CHUNK_TOKENS;
          if (input.contextWindow - fixed < MIN_CHUNK_TOKENS) {
            expect(() => planBudget(input)).toThrow(BudgetError);
            return;
          }
          const plan = planBudget(input);
          expect(plan.contextTokens).toBeLessThanOrEqual(input.contextWindow);
          expect(plan.contextTokens).toBe(fixed + plan.chunkTokens);
          expect(plan.chunkTokens).toBeLessThanOrEqual(requested);
          // Largest: either the requested size, or one more token would overflow the window.
          expect(plan.chunkTokens === requested || fixed + plan.chunkTokens + 1 > input.contextWindow).toBe(true);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('refuses with a clear message when the question leaves fewer than 500 tokens of the book', () => {
    const fixedWithoutQuestion = base.templateTokens + 2 * base.memoryTokens;
    const window = 8192;
    const fits = window - fixedWithoutQuestion - MIN_CHUNK_TOKENS; // a question of this size leaves exactly 500
    expect(planBudget({ ...base, contextWindow: window, questionTokens: fits }).chunkTokens).toBe(MIN_CHUNK_TOKENS);

    const tooLong = { ...base, contextWindow: window, questionTokens: fits + 1 };
    expect(() => planBudget(tooLong)).toThrow(BudgetError);
    try {
      planBudget(tooLong);
    } catch (e) {
      expect(e).toBeInstanceOf(BudgetError);
      const message = (e as Error).message;
      expect((e as Error).name).toBe('BudgetError');
      expect(message).toContain(`${fits + 1} tokens`); // says how long the question is
      expect(message).toContain(`${MIN_CHUNK_TOKENS - 1} tokens`); // and how much room is left
      expect(message).toMatch(/Shorten the question|smaller memory/);
    }
  });

  it('refuses a memory or chunk size under one token', () => {
    expect(() => planBudget({ ...base, memoryTokens: 0 })).toThrow(/memory size/);
    expect(() => planBudget({ ...base, requestedChunkTokens: 0 })).toThrow(/chunk size/);
  });
});
