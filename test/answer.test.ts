import { describe, expect, it } from 'vitest';
import { extractAnswer, memoryFromReply } from '../src/core/answer';

describe('extractAnswer, lenient (the generated tasks)', () => {
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

describe('extractAnswer, strict styles', () => {
  it('reads \\fbox{} as \\boxed{} when no \\boxed is present', () => {
    expect(extractAnswer('The result: \\fbox{Geneva {canton}}.', 'recurrent-boxed')).toBe('Geneva {canton}');
    expect(extractAnswer('\\fbox{Geneva} but \\boxed{Paris}', 'recurrent-boxed')).toBe('Paris');
  });

  it('finds no answer rather than falling back to the reply', () => {
    expect(extractAnswer('The creature went north.', 'recurrent')).toBeNull();
    expect(extractAnswer('The creature went north.', 'recurrent-boxed')).toBeNull();
    expect(extractAnswer('\\boxed{', 'recurrent-boxed')).toBeNull();
  });

  it('keeps the lenient reading as the default', () => {
    expect(extractAnswer('The creature went north.')).toBe('The creature went north.');
  });
});

describe('memoryFromReply', () => {
  it("keeps the paper's memory exactly as returned, spaces and all", () => {
    expect(memoryFromReply('  Notes: Paris.\n\n', 'verbatim')).toBe('  Notes: Paris.\n\n');
    expect(memoryFromReply('', 'verbatim')).toBe('');
  });

  it('keeps only what follows the last </think>, stripped', () => {
    expect(memoryFromReply('<think>a</think> x </think>\n Notes: Paris. \n', 'verbatim')).toBe('Notes: Paris.');
    expect(memoryFromReply('<think>only thinking</think>', 'verbatim')).toBe('');
  });

  it("trims for this app's reading", () => {
    expect(memoryFromReply('  Notes: Paris.\n', 'trimmed')).toBe('Notes: Paris.');
  });
});
