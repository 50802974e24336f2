import { describe, expect, it } from 'vitest';
import { extractAnswer } from '../src/core/answer';
import { formatLength, parseLength, parseLengths } from '../src/eval/lengths';
import {
  lenientExactMatch as exactMatch,
  lenientF1 as f1Score,
  lenientNormalize as normalizeAnswer,
  lenientSubstringMatch as substringMatch,
  scoreAnswer,
  stringMatchAll,
  stringMatchPart,
} from '../src/eval/score';

describe('RULER string matching', () => {
  it('string_match_all is the share of references found, case-insensitively', () => {
    expect(stringMatchAll('The numbers are 1234567 and 7654321.', ['1234567', '7654321', '1111111'])).toBeCloseTo(2 / 3);
    expect(stringMatchAll('ABZSN, kmgos and GetNf', ['abzsn', 'KMGOS', 'getnf'])).toBe(1);
    expect(stringMatchAll('nothing here', ['1234567'])).toBe(0);
    expect(stringMatchAll('anything', [])).toBe(0);
  });

  it('string_match_part is 1 when any reference is found', () => {
    expect(stringMatchPart('It is 7654321.', ['1234567', '7654321'])).toBe(1);
    expect(stringMatchPart('It is 765432.', ['1234567', '7654321'])).toBe(0);
  });
});

describe('lenient QA scoring (the generated tasks)', () => {
  it('normalises case, any punctuation, articles and spaces', () => {
    expect(normalizeAnswer('  The Quick,  brown fox!  ')).toBe('quick brown fox');
    expect(normalizeAnswer('An "apple" a day')).toBe('apple day');
    expect(normalizeAnswer('Théâtre')).toBe('théâtre');
  });

  it('exact match compares normalised strings', () => {
    expect(exactMatch('The copper bells.', ['copper bells'])).toBe(1);
    expect(exactMatch('Copper bells, of course', ['copper bells'])).toBe(0);
    expect(exactMatch('Vermilion', ['scarlet', 'vermilion'])).toBe(1);
  });

  it('substring match finds the normalised reference inside the prediction', () => {
    expect(substringMatch('The town is known for its Copper Bells and bread.', ['copper bells'])).toBe(1);
    expect(substringMatch('The town is known for its bells.', ['copper bells'])).toBe(0);
    expect(substringMatch('anything', [''])).toBe(0);
  });

  it('F1 counts shared tokens against the best reference', () => {
    // prediction: blue glass lanterns of town (5 tokens, "the" dropped); reference: 3 tokens, all shared.
    expect(f1Score('blue glass lanterns of the town', ['blue glass lanterns'])).toBeCloseTo((2 * 0.6 * 1) / 1.6);
    expect(f1Score('glass', ['blue glass lanterns'])).toBeCloseTo((2 * 1 * (1 / 3)) / (1 + 1 / 3));
    expect(f1Score('red', ['blue glass lanterns'])).toBe(0);
    expect(f1Score('bells bells', ['bells'])).toBeCloseTo((2 * 0.5 * 1) / 1.5);
  });

  it('each metric has its headline score', () => {
    const qa = scoreAnswer('qa', 'It is known for its copper bells', ['copper bells']);
    expect(qa).toMatchObject({ score: 1, substringMatch: 1, exactMatch: 0 });
    // 2 of the 7 predicted tokens, all of the reference's 2: F1 = 2·(2/7)·1 / (2/7 + 1) = 4/9.
    expect(qa.f1).toBeCloseTo(4 / 9);
    expect(scoreAnswer('string_match_all', 'A and B', ['a', 'c']).score).toBe(0.5);
    expect(scoreAnswer('string_match_part', 'A and B', ['a', 'c']).score).toBe(1);
  });

  it('scores what the loop extracts from a reply', () => {
    const reply = 'My memory holds the needle for quiet-lantern. \\boxed{The special magic number is 4829137}';
    expect(scoreAnswer('string_match_all', extractAnswer(reply), ['4829137']).score).toBe(1);
    expect(scoreAnswer('qa', extractAnswer('Thinking... the answer is: Copper bells.'), ['copper bells']).exactMatch).toBe(1);
  });
});

describe('lengths', () => {
  it('reads 8k, 1m and friends as RULER counts them', () => {
    expect(parseLength('8k')).toBe(8192);
    expect(parseLength('128K')).toBe(131072);
    expect(parseLength('1m')).toBe(1048576);
    expect(parseLength('3.5m')).toBe(3670016);
    expect(parseLength('5000')).toBe(5000);
    expect(parseLengths('32k, 8k,8k')).toEqual([8192, 32768]);
    expect(() => parseLength('eight')).toThrow(/not a length/);
    expect(() => parseLength('10')).toThrow(/out of range/);
  });

  it('writes them back the same way', () => {
    expect([8192, 131072, 1048576, 3670016, 7168, 5000].map(formatLength)).toEqual(['8K', '128K', '1M', '3.5M', '7K', '5,000']);
  });
});
