import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { normalizeText } from '../src/ingest/text';

const stable: string[] = [];
for (let c = 0; c < 0x300; c++) stable.push(String.fromCharCode(c));
for (let c = 0x2010; c <= 0x205e; c++) stable.push(String.fromCharCode(c));

describe('normalizing a decoded text', () => {
  it('skips NFC only for characters that NFC leaves alone, alone and in every pair', () => {
    const singles = stable.join('');
    expect(singles.normalize('NFC')).toBe(singles);
    const pairs = stable.flatMap((a) => stable.map((b) => a + b)).join('');
    expect(pairs.normalize('NFC')).toBe(pairs);
  });

  it('gives what NFC gives, with Windows and old Mac line ends made \\n', () => {
    const pieces = fc.constantFrom('e', '\u0301', 'A\u030A', '\u212B', 'é', '“', '—', '\r\n', '\r', '\n', '한', '\u1100\u1161', 'ﬁ', '漢', '😀', ' ');
    fc.assert(
      fc.property(fc.array(pieces, { maxLength: 40 }), (parts) => {
        const text = parts.join('');
        expect(normalizeText(text)).toBe(text.replace(/\r\n?/g, '\n').normalize('NFC'));
      }),
      { numRuns: 2000 },
    );
  });

  it('returns an English book with curly quotes and dashes as it is', () => {
    const text = 'It was on a dreary night of November — “Victor,” she said… ';
    expect(normalizeText(text)).toBe(text);
  });
});
