import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isNfc } from '../src/core/nfc';
import { lineEndsInPlace } from '../src/ingest/charset';
import { decodeText, normalizeText } from '../src/ingest/text';

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

  it('tells whether a text is in NFC as normalizing it would', () => {
    const pieces = fc.constantFrom('e', '\u0301', 'A\u030A', '\u212B', 'é', '“', '—', '\n', '한', '\u1100\u1161', 'ﬁ', '漢', '😀', ' ', 'か\u3099');
    fc.assert(
      fc.property(fc.array(pieces, { maxLength: 30 }), (parts) => {
        const text = parts.join('');
        expect(isNfc(text)).toBe(text.normalize('NFC') === text);
      }),
      { numRuns: 1000 },
    );
  });

  it('returns an English book with curly quotes and dashes as it is', () => {
    const text = 'It was on a dreary night of November — “Victor,” she said… ';
    expect(normalizeText(text)).toBe(text);
  });
});

describe('line ends normalised in the bytes before decoding', () => {
  const encodings = ['utf-8', 'windows-1252', 'shift_jis', 'gb18030', 'big5'] as const;
  const pieces = fc.constantFrom('e', 'é', '“', '—', '\r\n', '\r', '\n', '\r\r\n', ' ', 'a', 'マ', '档', '館');

  it('reads every 8-bit encoding to the same text as normalising after decoding', async () => {
    const { default: iconv } = await import('iconv-lite');
    fc.assert(
      fc.property(fc.array(pieces, { minLength: 1, maxLength: 60 }), fc.constantFrom(...encodings), (parts, encoding) => {
        const text = `Once ${parts.join('')} upon a time`;
        const encodable = encoding === 'windows-1252' ? text.replace(/[マ档館]/g, '?') : encoding === 'utf-8' ? text : text.replace(/[é“—]/g, '?');
        const bytes = new Uint8Array(iconv.encode(encodable, encoding));
        const kept = bytes.slice();
        const inPlace = decodeText(bytes.slice(), 'book.txt', { inPlace: true });
        const copied = decodeText(kept, 'book.txt');
        expect(inPlace).toEqual(copied);
        // (A short legacy text may be detected as another encoding; both ways detect the same one.)
        if (encoding === 'utf-8') expect(copied.text).toBe(normalizeText(encodable));
      }),
      { numRuns: 300 },
    );
  });

  it('leaves UTF-16 files and binary files alone', () => {
    const utf16 = new Uint8Array([0xff, 0xfe, 0x41, 0x00, 0x0d, 0x00, 0x0a, 0x00]);
    expect(lineEndsInPlace(utf16)).toBe(utf16);
    expect([...utf16]).toEqual([0xff, 0xfe, 0x41, 0x00, 0x0d, 0x00, 0x0a, 0x00]);
    const png = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
    expect(lineEndsInPlace(png)).toBe(png);
  });
});
