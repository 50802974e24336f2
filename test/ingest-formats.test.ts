import { describe, expect, it } from 'vitest';
import { describePlace } from '../src/core/anchors';
import { ingestBytes } from '../src/ingest/ingest';
import { bookChapters, bookPages, CJK, encode, FACT, makeDocx, makeEpub, makeHtml, makePdf, owned, prose, WESTERN } from './fixtures/documents';

const utf8 = (s: string) => owned(new TextEncoder().encode(s));

describe('plain text in every charset a reader has', () => {
  const cases: [string, string, Uint8Array<ArrayBuffer>, string][] = [
    ['UTF-8 without BOM', 'UTF-8', utf8(WESTERN), WESTERN],
    ['UTF-8 with BOM', 'UTF-8', owned(new Uint8Array([0xef, 0xbb, 0xbf, ...utf8(WESTERN)])), WESTERN],
    ['UTF-16LE with BOM', 'UTF-16LE', owned(new Uint8Array([0xff, 0xfe, ...encode(WESTERN, 'utf16le')])), WESTERN],
    ['UTF-16BE with BOM', 'UTF-16BE', owned(new Uint8Array([0xfe, 0xff, ...encode(WESTERN, 'utf16be')])), WESTERN],
    ['Windows-1252', 'windows-1252', encode(WESTERN, 'windows-1252'), WESTERN],
    ['Latin-1', 'windows-1252', encode(WESTERN.replace(/[“”’—€]/g, '"'), 'latin1'), WESTERN.replace(/[“”’—€]/g, '"')],
    ['GB18030', 'GB18030', encode(CJK.simplified, 'gb18030'), CJK.simplified],
    ['Big5', 'Big5', encode(CJK.traditional, 'big5'), CJK.traditional],
    ['Shift_JIS', 'Shift_JIS', encode(CJK.japanese, 'shift_jis'), CJK.japanese],
  ];
  it.each(cases)('%s', async (_, encoding, bytes, expected) => {
    const doc = await ingestBytes('book.txt', bytes);
    expect(doc.encoding).toBe(encoding);
    expect(doc.text).toBe(expected);
    expect(doc.format).toBe('text');
  });

  it('keeps chapter lines as anchors, in Chinese too', async () => {
    const doc = await ingestBytes('book.txt', encode(CJK.simplified, 'gb18030'));
    expect(doc.anchors.map((a) => a.label)).toEqual(['第一章 港口', '第二章 档案馆', '第三章 风暴']);
    expect(describePlace(doc.anchors, doc.text.indexOf('4829137'))).toBe('第二章 档案馆');
  });

  it('line ends become \\n and text NFC, and the same bytes get the same id', async () => {
    const a = await ingestBytes('a.txt', utf8('Cafe\u0301 one\r\ntwo\rthree\n'));
    expect(a.text).toBe('Café one\ntwo\nthree\n');
    const b = await ingestBytes('other name.txt', utf8('Cafe\u0301 one\r\ntwo\rthree\n'));
    expect(b.hash).toBe(a.hash);
    expect(a.hash).toMatch(/^[0-9a-f]{64}$/);
  });
});

describe('Markdown', () => {
  it('keeps the text as written and # headings as anchors (not those in code)', async () => {
    const md = `# The Marlowe Papers\n\n## Chapter 1\n\n${FACT.sentence}\n\n\`\`\`\n# not a heading\n\`\`\`\n\n## Chapter 2\n\nMore.\n`;
    const doc = await ingestBytes('notes.md', utf8(md));
    expect(doc.format).toBe('markdown');
    expect(doc.text).toBe(md);
    expect(doc.anchors.map((a) => [a.label, a.level])).toEqual([
      ['The Marlowe Papers', 1],
      ['Chapter 1', 2],
      ['Chapter 2', 2],
    ]);
    expect(describePlace(doc.anchors, doc.text.indexOf('4829137'))).toBe('Chapter 1');
  });
});

describe('HTML', () => {
  it('reads the text only: scripts, styles and the head are dropped, entities decoded, headings kept', async () => {
    const doc = await ingestBytes('page.html', utf8(makeHtml()));
    expect(doc.format).toBe('html');
    expect(doc.title).toBe('The Marlowe Papers');
    expect(doc.text).toContain(FACT.sentence);
    expect(doc.text).toContain('Fish & chips été — <tag>');
    for (const bad of ['SCRIPT', 'MODULE TEXT', 'STYLE TEXT', 'NOSCRIPT', 'color: red', 'onerror']) expect(doc.text).not.toContain(bad);
    expect(doc.text.startsWith(`Home\n\nThe Marlowe Papers\n\nChapter 1: The Harbour\n\n${prose(1)}\n\n`)).toBe(true);
    expect(doc.anchors.map((a) => [a.label, a.level])).toEqual([
      ['The Marlowe Papers', 1],
      ['Chapter 1: The Harbour', 2],
      ['Chapter 2: The Archive', 2],
    ]);
    expect(describePlace(doc.anchors, doc.text.indexOf('4829137'))).toBe('Chapter 2: The Archive');
    expect(doc.text.slice(doc.anchors[1]!.at).startsWith('Chapter 1: The Harbour')).toBe(true);
  });

  it('honours a declared legacy charset', async () => {
    const html = '<html><head><meta charset="windows-1252"></head><body><p>Café “quoted”</p></body></html>';
    const doc = await ingestBytes('old.htm', encode(html, 'windows-1252'));
    expect(doc.text).toBe('Café “quoted”');
    expect(doc.encoding).toBe('windows-1252');
  });
});

describe('EPUB', () => {
  for (const toc of ['nav', 'ncx'] as const) {
    it(`reads chapters in spine order with their ${toc === 'nav' ? 'EPUB 3 nav' : 'EPUB 2 NCX'} titles`, async () => {
      const doc = await ingestBytes('book.epub', makeEpub({ toc, shuffleFiles: true }));
      expect(doc.format).toBe('epub');
      expect(doc.title).toBe('The Marlowe Papers');
      const chapters = bookChapters();
      let last = -1;
      for (const c of chapters) {
        const at = doc.text.indexOf(c.paragraphs[0]!);
        expect(at).toBeGreaterThan(last);
        last = at;
      }
      expect(doc.text).not.toContain('p { margin');
      expect(doc.anchors.map((a) => a.label)).toEqual(chapters.map((c) => c.title));
      for (const a of doc.anchors) expect(doc.text.slice(a.at).startsWith(a.label)).toBe(true);
      expect(describePlace(doc.anchors, doc.text.indexOf('4829137'))).toBe('Chapter 2: The Archive');
    });
  }
});

describe('DOCX', () => {
  it('reads paragraphs, skips deleted text and keeps heading styles as anchors', async () => {
    const doc = await ingestBytes('book.docx', makeDocx());
    expect(doc.format).toBe('docx');
    expect(doc.text).toContain(FACT.sentence);
    expect(doc.text).not.toContain('DELETED');
    expect(doc.text.split('\n\n')[0]).toBe('The Marlowe Papers');
    expect(doc.anchors.map((a) => [a.label, a.level])).toEqual([
      ['The Marlowe Papers', 1],
      ['Chapter 1: The Harbour', 1],
      ['Chapter 2: The Archive', 1],
    ]);
    expect(describePlace(doc.anchors, doc.text.indexOf('4829137'))).toBe('Chapter 2: The Archive');
  });
});

describe('PDF', () => {
  it('reads the text layer page by page, keeping page numbers and chapters', async () => {
    const pages = bookPages();
    const doc = await ingestBytes('book.pdf', await makePdf(pages));
    expect(doc.format).toBe('pdf');
    expect(doc.pages).toBe(4);
    const pageAnchors = doc.anchors.filter((a) => a.kind === 'page');
    expect(pageAnchors.map((a) => a.label)).toEqual(['1', '2', '3', '4']);
    pages.forEach((lines, i) => expect(doc.text.slice(pageAnchors[i]!.at).startsWith(lines[0]!)).toBe(true));
    expect(doc.text).toContain(FACT.sentence);
    expect(describePlace(doc.anchors, doc.text.indexOf('4829137'))).toBe('Chapter 2, p. 3');
    expect(describePlace(doc.anchors, doc.text.indexOf(pages[1]![0]!))).toBe('Chapter 1, p. 2');
  });
});
