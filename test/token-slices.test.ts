import { beforeAll, describe, expect, it } from 'vitest';
import { sliceTokens } from '../src/core/token-slices';
import { loadQwenTokenizer, type QwenTokenizer } from '../src/engines/qwen-tokenizer';
import { corpusText } from './helpers';

let tok: QwenTokenizer;

beforeAll(async () => {
  tok = await loadQwenTokenizer();
});

/** What the model is sent for each chunk. */
const sections = (text: string, spans: ReturnType<typeof sliceTokens>) => spans.map((s) => s.text ?? text.slice(s.start, s.end));

describe('exact token slices', () => {
  it('are the decoded slices of the whole text’s ids, every one but the last exactly the chunk size', () => {
    const text = corpusText('frankenstein.txt').slice(20_000, 60_000);
    const ids = tok.encode(text);
    const spans = sliceTokens(text, tok, 1000);
    expect(spans.length).toBe(Math.ceil(ids.length / 1000));
    expect(spans.slice(0, -1).every((s) => s.tokens === 1000)).toBe(true);
    expect(spans.at(-1)!.tokens).toBe(ids.length - 1000 * (spans.length - 1));
    expect(sections(text, spans)).toEqual(spans.map((_, k) => tok.decode(ids.slice(k * 1000, (k + 1) * 1000))));
    expect(sections(text, spans).join('')).toBe(text);
    // Spans cover the text in order with no gap.
    expect(spans[0]!.start).toBe(0);
    expect(spans.at(-1)!.end).toBe(text.length);
    for (let k = 1; k < spans.length; k++) expect(spans[k]!.start).toBe(spans[k - 1]!.end);
    // Unlike the boundary-aware cutter, the cuts fall wherever the count does: some inside a word.
    expect(spans.slice(1).some((s) => /\p{L}/u.test(text[s.start - 1]!) && /\p{L}/u.test(text[s.start]!))).toBe(true);
  });

  it('may split a character, whose bytes then decode to U+FFFD on both sides, as the reference decoder does', () => {
    // "🦩" is two tokens (three bytes, then one): a cut after "a" and the first of them splits it.
    expect(tok.encode('a🦩b')).toHaveLength(4);
    const spans = sliceTokens('a🦩b', tok, 2);
    expect(spans).toEqual([
      { start: 0, end: 1, tokens: 2, text: 'a\uFFFD' },
      { start: 1, end: 4, tokens: 2, text: '\uFFFDb' },
    ]);
  });

  it('give no chunk for an empty text, and one for a text shorter than the size', () => {
    expect(sliceTokens('', tok, 5000)).toEqual([]);
    expect(sliceTokens('Document 1:\nParis', tok, 5000)).toEqual([{ start: 0, end: 17, tokens: tok.count('Document 1:\nParis') }]);
  });

  it('send the normalised text of a text that is not NFC, covering it all', () => {
    const text = 'Cafe\u0301 au lait. '.repeat(40);
    const spans = sliceTokens(text, tok, 7);
    expect(sections(text, spans).join('')).toBe(text.normalize('NFC'));
    expect(spans.at(-1)!.end).toBe(text.length);
    for (let k = 1; k < spans.length; k++) expect(spans[k]!.start).toBeGreaterThanOrEqual(spans[k - 1]!.start);
  });

  it('refuse a chunk size that is not a whole number of tokens', () => {
    expect(() => sliceTokens('text', tok, 0)).toThrow(RangeError);
    expect(() => sliceTokens('text', tok, 2.5)).toThrow(RangeError);
  });
});
