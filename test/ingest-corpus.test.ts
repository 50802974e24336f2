import { describe, expect, it } from 'vitest';
import { anchorsAt, cutAnchors, describePlace } from '../src/core/anchors';
import { findGutenberg } from '../src/ingest/gutenberg';
import { ingestBytes } from '../src/ingest/ingest';
import { chapterAnchors } from '../src/ingest/structure';
import { corpusBytes, corpusText } from './helpers';

describe('Frankenstein (Project Gutenberg, UTF-8 with BOM, CRLF)', () => {
  it('strips the header and footer by default and remembers them', async () => {
    const doc = await ingestBytes('frankenstein.txt', corpusBytes('frankenstein.txt'));
    const full = corpusText('frankenstein.txt');
    expect(doc.encoding).toBe('UTF-8');
    expect(doc.text.startsWith('Produced by Judith Boss')).toBe(true);
    expect(doc.text.endsWith('lost in darkness and distance.')).toBe(true);
    expect(doc.stripped!.header).toMatch(/\*\*\* START OF THIS PROJECT GUTENBERG EBOOK FRANKENSTEIN \*\*\*\n+$/);
    expect(doc.stripped!.footer).toMatch(/^\n*End of the Project Gutenberg EBook of Frankenstein/);
    expect(doc.stripped!.footer).toContain('*** END OF THIS PROJECT GUTENBERG EBOOK FRANKENSTEIN ***');
    // Nothing else is lost: header + book + footer is the whole file.
    expect(doc.stripped!.header + doc.text + doc.stripped!.footer).toBe(full);
    expect(doc.text).not.toContain('Project Gutenberg');
  });

  it('keeps everything when stripping is off', async () => {
    const doc = await ingestBytes('frankenstein.txt', corpusBytes('frankenstein.txt'), { stripGutenberg: false });
    expect(doc.text).toBe(corpusText('frankenstein.txt'));
    expect(doc.stripped).toBeUndefined();
  });

  it('finds its 4 letters and 24 chapters, not the table of contents', async () => {
    const doc = await ingestBytes('frankenstein.txt', corpusBytes('frankenstein.txt'));
    expect(doc.anchors.map((a) => a.label)).toEqual([...[1, 2, 3, 4].map((n) => `Letter ${n}`), ...Array.from({ length: 24 }, (_, i) => `Chapter ${i + 1}`)]);
    for (const a of doc.anchors) expect(doc.text.slice(a.at, a.at + a.label.length)).toBe(a.label);
    const at = doc.text.indexOf('I had worked hard for nearly two years');
    expect(describePlace(doc.anchors, at)).toBe('Chapter 5');
  });
});

describe('Pride and Prejudice (234-page PDF)', () => {
  it('reads all 234 pages in order, with page numbers and chapters', { timeout: 30_000 }, async () => {
    const doc = await ingestBytes('pride-and-prejudice.pdf', corpusBytes('pride-and-prejudice.pdf'), { stripGutenberg: false });
    expect(doc.pages).toBe(234);
    const pages = doc.anchors.filter((a) => a.kind === 'page');
    expect(pages.map((a) => a.label)).toEqual(Array.from({ length: 234 }, (_, i) => String(i + 1)));
    for (let i = 1; i < pages.length; i++) expect(pages[i]!.at).toBeGreaterThan(pages[i - 1]!.at);
    // Pages hold what their page holds: the book's first line on page 2, the licence at the end.
    expect(doc.text.slice(pages[0]!.at, pages[1]!.at)).toContain('The Project Gutenberg EBook of Pride and Prejudice');
    const truth = doc.text.indexOf('It is a truth universally acknowledged');
    expect(anchorsAt(doc.anchors, truth).page?.label).toBe('2');
    expect(describePlace(doc.anchors, truth)).toBe('Chapter 1, p. 2');
    expect(doc.text.slice(pages[233]!.at)).toContain('http://pglaf.org');
    // 61 chapters, then the five sections of the licence.
    const chapters = doc.anchors.filter((a) => a.kind === 'chapter');
    expect(chapters.map((a) => a.label.split('.')[0])).toEqual([
      ...Array.from({ length: 61 }, (_, i) => `Chapter ${i + 1}`),
      ...[1, 2, 3, 4, 5].map((n) => `Section ${n}`),
    ]);
    expect(describePlace(doc.anchors, chapters[11]!.at + 10)).toBe('Chapter 12, p. 37');
  });

  it('strips the Gutenberg header and footer from the text layer too', { timeout: 30_000 }, async () => {
    const doc = await ingestBytes('pride-and-prejudice.pdf', corpusBytes('pride-and-prejudice.pdf'));
    expect(doc.text.startsWith('Produced by Anonymous Volunteers')).toBe(true);
    expect(doc.text).not.toContain('START OF THIS PROJECT GUTENBERG');
    expect(doc.text.trimEnd().endsWith('the means of uniting\nthem.')).toBe(true);
    // The first kept text is still on page 1; the last page kept is before the licence.
    expect(describePlace(doc.anchors, 0)).toBe('p. 1');
    expect(doc.stripped!.footer).toContain('END OF THIS PROJECT GUTENBERG EBOOK');
  });
});

describe('anchors', () => {
  const anchors = [
    { at: 0, kind: 'page' as const, label: '1' },
    { at: 10, kind: 'chapter' as const, label: 'Chapter 1', level: 2 },
    { at: 50, kind: 'page' as const, label: '2' },
    { at: 80, kind: 'chapter' as const, label: 'Chapter 2', level: 2 },
  ];

  it('describe a place by its chapter and page', () => {
    expect(describePlace(anchors, 5)).toBe('p. 1');
    expect(describePlace(anchors, 10)).toBe('Chapter 1, p. 1');
    expect(describePlace(anchors, 79)).toBe('Chapter 1, p. 2');
    expect(describePlace(anchors, 1000)).toBe('Chapter 2, p. 2');
    expect(describePlace([], 3)).toBe('');
  });

  it('follow a cut: what was before moves to 0, what was after is dropped', () => {
    expect(cutAnchors(anchors, 20, 70)).toEqual([
      { at: 0, kind: 'page', label: '1' },
      { at: 0, kind: 'chapter', label: 'Chapter 1', level: 2 },
      { at: 30, kind: 'page', label: '2' },
    ]);
  });

  it('a lone heading-like line in prose is not a chapter; a contents list is not either', () => {
    const text = 'Contents\n\nChapter 1\nChapter 2\nChapter 3\n\nChapter 1\n\nText.\nchapter 3 of the book\nIntroduction that I had\n\nChapter 2\n\nMore.';
    expect(chapterAnchors(text).map((a) => [a.label, a.at])).toEqual([
      ['Chapter 1', text.indexOf('Chapter 1\n\nText')],
      ['Chapter 2', text.lastIndexOf('Chapter 2')],
    ]);
  });
});

describe('Project Gutenberg markers', () => {
  it('are found in their old and new forms, or not at all', () => {
    const modern = 'Title page\n*** START OF THE PROJECT GUTENBERG EBOOK X ***\n\nBody.\n\n*** END OF THE PROJECT GUTENBERG EBOOK X ***\nLicence';
    const cut = findGutenberg(modern)!;
    expect(modern.slice(cut.start, cut.end)).toBe('Body.');
    expect(findGutenberg('A book that merely mentions Project Gutenberg.')).toBeNull();
  });
});
