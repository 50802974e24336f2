import { describe, expect, it } from 'vitest';
import { extractAnswer } from '../src/core/answer';

describe('extractAnswer', () => {
  it('takes the content of the last \\boxed{} in the reply', () => {
    expect(extractAnswer('First \\boxed{12}, then on reflection \\boxed{ 13 }.')).toBe('13');
  });

  it('keeps nested braces inside \\boxed{} balanced', () => {
    expect(extractAnswer('So x = \\boxed{\\frac{1}{2} + {a, {b}}} in total.')).toBe('\\frac{1}{2} + {a, {b}}');
  });

  it('falls back to an earlier \\boxed{} when the last one never closes', () => {
    expect(extractAnswer('Answer \\boxed{Geneva}. Also \\boxed{Ingolstadt')).toBe('Geneva');
  });

  it('takes the text after the last "the answer is", whatever its case, without a final period', () => {
    const reply = 'I thought the answer is Paris. On reflection, THE ANSWER IS: Elizabeth Lavenza.';
    expect(extractAnswer(reply)).toBe('Elizabeth Lavenza');
  });

  it('prefers \\boxed{} over "the answer is"', () => {
    expect(extractAnswer('The answer is maybe Walton, \\boxed{Victor}.')).toBe('Victor');
  });

  it('returns the whole reply, trimmed, when neither form is present', () => {
    expect(extractAnswer('  The creature went north.\n')).toBe('The creature went north.');
    // "the answer is" with nothing after it says nothing.
    expect(extractAnswer('I do not know what the answer is.')).toBe('I do not know what the answer is.');
  });
});
