import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { IngestError, ingestBytes } from '../src/ingest/ingest';
import { decodeText } from '../src/ingest/text';
import { pseudoRandomBytes } from './helpers';

const SAMPLE = 'It was on a dreary night of November.\nCafé, naïve — “quoted” 😀 漢字';

function bytes(...parts: (number[] | Uint8Array)[]): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(new ArrayBuffer(parts.reduce((n, p) => n + p.length, 0)));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}
const utf8 = (s: string) => new TextEncoder().encode(s);
function utf16(s: string, littleEndian: boolean): Uint8Array {
  const out = new Uint8Array(s.length * 2);
  const view = new DataView(out.buffer);
  for (let i = 0; i < s.length; i++) view.setUint16(i * 2, s.charCodeAt(i), littleEndian);
  return out;
}

/** The IngestError `run` throws (failing the test if it throws nothing or something else). */
function refusal(run: () => unknown): IngestError {
  try {
    run();
  } catch (e) {
    expect(e).toBeInstanceOf(IngestError);
    return e as IngestError;
  }
  throw new Error('expected an IngestError, got none');
}

describe('decodeText accepts text', () => {
  it('reads UTF-8 without a BOM', () => {
    expect(decodeText(utf8(SAMPLE), 'a.txt')).toEqual({ text: SAMPLE, encoding: 'UTF-8' });
  });

  it('reads UTF-8 with a BOM and drops the BOM', () => {
    expect(decodeText(bytes([0xef, 0xbb, 0xbf], utf8(SAMPLE)), 'a.txt')).toEqual({ text: SAMPLE, encoding: 'UTF-8' });
  });

  it('reads UTF-16 LE and BE with a BOM, surrogate pairs included', () => {
    expect(decodeText(bytes([0xff, 0xfe], utf16(SAMPLE, true)), 'le.txt')).toEqual({ text: SAMPLE, encoding: 'UTF-16LE' });
    expect(decodeText(bytes([0xfe, 0xff], utf16(SAMPLE, false)), 'be.txt')).toEqual({ text: SAMPLE, encoding: 'UTF-16BE' });
  });

  it('normalises CRLF and lone CR line ends to \\n, and Unicode to NFC', () => {
    const decomposed = 'Cafe\u0301\r\nline two\rline three\r\n';
    const { text } = decodeText(utf8(decomposed), 'crlf.txt');
    expect(text).toBe('Caf\u00e9\nline two\nline three\n');
    expect(text).not.toContain('\r');
  });
});

describe('decodeText refuses what is not text, saying why', () => {
  it('refuses an empty file', () => {
    expect(refusal(() => decodeText(new Uint8Array(0), 'empty.txt')).message).toMatch(/"empty\.txt" is empty \(0 bytes\)/);
  });

  it('refuses a PNG image by its signature', () => {
    const png = bytes([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], pseudoRandomBytes(200, 7));
    expect(refusal(() => decodeText(png, 'cover.txt')).message).toMatch(/"cover\.txt" is a PNG image, not text/);
  });

  it('refuses random binary bytes as binary data', () => {
    for (const seed of [1, 2, 3, 42, 2024]) {
      const message = refusal(() => decodeText(pseudoRandomBytes(4096, seed), 'blob.txt')).message;
      expect(message).toMatch(/"blob\.txt" contains binary data, not text/);
    }
  });

  it('refuses text sprinkled with control bytes', () => {
    const text = utf8('plain words '.repeat(20)).map((b, i) => (i % 16 === 0 ? 0x01 : b));
    expect(refusal(() => decodeText(bytes(text), 'ctl.txt')).message).toMatch(/binary data/);
  });

  it('refuses bytes that break the UTF-8 or UTF-16 their BOM declares', () => {
    // 0xE9 alone is Latin-1 "é", never valid UTF-8.
    const badUtf8 = bytes([0xef, 0xbb, 0xbf], utf8('caf'), [0xe9], utf8(' au lait'));
    expect(refusal(() => decodeText(badUtf8, 'bad.txt')).message).toMatch(/UTF-8 byte order mark but is not valid UTF-8/);
    const lone = bytes([0xff, 0xfe], utf16('ab', true), [0x00, 0xd8]); // an unpaired high surrogate
    expect(refusal(() => decodeText(lone, 'bad16.txt')).message).toMatch(/UTF-16 byte order mark but is not valid UTF-16/);
  });

  it('refuses a single byte that no encoding reads as text', () => {
    expect(refusal(() => decodeText(bytes([0xe9]), 'one.txt')).message).toMatch(/"one\.txt" (contains binary data|is not valid)/);
  });

  it('refuses a file of only blank space', () => {
    expect(refusal(() => decodeText(utf8(' \n\t\r\n  \n'), 'blank.txt')).message).toMatch(/"blank\.txt" holds only blank space/);
  });
});

describe('ingestBytes', () => {
  it('identifies a file by the SHA-256 of its bytes and keeps its decoded text', async () => {
    const file = bytes([0xef, 0xbb, 0xbf], utf8('Chapter 1\r\n\r\nA book.\r\n'));
    const doc = await ingestBytes('book.txt', file);
    expect(doc.hash).toBe(createHash('sha256').update(file).digest('hex'));
    expect(doc.bytes).toBe(file.length);
    expect(doc.encoding).toBe('UTF-8');
    expect(doc.text).toBe('Chapter 1\n\nA book.\n');
    // The same bytes under another name are the same document; one changed byte is another.
    expect((await ingestBytes('copy.txt', file)).hash).toBe(doc.hash);
    const changed = file.slice();
    changed[changed.length - 2] = 0x21;
    expect((await ingestBytes('book.txt', changed)).hash).not.toBe(doc.hash);
  });

  it('refuses an empty file and a PNG named .txt with an IngestError', async () => {
    await expect(ingestBytes('empty.txt', bytes())).rejects.toThrow(IngestError);
    await expect(ingestBytes('image.txt', bytes([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))).rejects.toThrow(/PNG image/);
  });
});
