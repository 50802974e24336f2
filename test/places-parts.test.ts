import { describe, expect, it } from 'vitest';
import { describePlace, sectionPlace } from '../src/core/anchors';
import { layBooks, setAnchors } from '../src/core/book-set';
import { ingestBytes } from '../src/ingest/ingest';

const ROMAN = ['I', 'II', 'III', 'IV', 'V', 'VI', 'VII', 'VIII', 'IX', 'X', 'XI', 'XII'];
const WORDS = ['ONE', 'TWO', 'THREE'];

/** A paragraph of prose that names where it is, so that a test can find it. */
const prose = (where: string) =>
  `It was a grey morning at ${where}. The carts went by on the road, and nobody spoke of the war. ` +
  'The old prince walked in the garden as he did every day, and the house was quiet until dinner.';

/**
 * A novel laid out as War and Peace is: a table of contents, then books whose
 * chapters start again at I, then a first and a second epilogue with chapters
 * of their own.
 */
function novel(chapters = 10): string {
  const parts = [...WORDS.map((w, i) => `BOOK ${w}: ${1805 + i}`), 'FIRST EPILOGUE: 1813 - 20', 'SECOND EPILOGUE'];
  const contents = ['CONTENTS', '', ...parts.flatMap((p) => [p, ...ROMAN.slice(0, chapters).map((r) => `CHAPTER ${r}`)])].join('\n');
  const body = parts.map((p) => [p, ...ROMAN.slice(0, chapters).map((r) => `CHAPTER ${r}\n\n${prose(`${p.split(':')[0]} ${r}`)}`)].join('\n\n\n'));
  return `WAR AND PEACE\n\nBy Leo Tolstoy\n\n${contents}\n\n\n${body.join('\n\n\n')}\n`;
}

async function anchorsOf(name: string, text: string) {
  return (await ingestBytes(name, new TextEncoder().encode(text) as Uint8Array<ArrayBuffer>)).anchors;
}

describe('a place in a book whose chapters start again in each part', () => {
  it('names the book or epilogue that holds the chapter, not the chapter alone', async () => {
    const text = novel();
    const anchors = await anchorsOf('war-and-peace.txt', text);
    const at = (where: string) => text.indexOf(`at ${where}.`);
    expect(describePlace(anchors, at('BOOK ONE IX'))).toBe('BOOK ONE, CHAPTER IX');
    expect(describePlace(anchors, at('BOOK THREE II'))).toBe('BOOK THREE, CHAPTER II');
    expect(describePlace(anchors, at('FIRST EPILOGUE IV'))).toBe('FIRST EPILOGUE, CHAPTER IV');
    expect(describePlace(anchors, at('SECOND EPILOGUE I'))).toBe('SECOND EPILOGUE, CHAPTER I');
    // Two places with the same chapter in different books are told apart.
    expect(describePlace(anchors, at('BOOK ONE IX'))).not.toBe(describePlace(anchors, at('BOOK TWO IX')));
  });

  it('names a section that runs into the next chapter of the same book once with its book, and one that runs into the next book with both', async () => {
    const text = novel();
    const anchors = await anchorsOf('war-and-peace.txt', text);
    const at = (where: string) => text.indexOf(`at ${where}.`);
    expect(sectionPlace(anchors, at('BOOK ONE IX'), at('BOOK ONE X') + 10)).toBe('BOOK ONE, CHAPTER IX – CHAPTER X');
    expect(sectionPlace(anchors, at('BOOK ONE X'), at('BOOK TWO I') + 10)).toBe('BOOK ONE, CHAPTER X – BOOK TWO, CHAPTER I');
    expect(sectionPlace(anchors, at('BOOK TWO III'), at('BOOK TWO III') + 20)).toBe('BOOK TWO, CHAPTER III');
  });

  it('names Markdown chapters under their parts where chapters restart, and leaves chapters that never restart alone', async () => {
    const md = [
      '# Part One: The Harbour',
      '## Chapter 1',
      prose('P1 C1'),
      '## Chapter 2',
      prose('P1 C2'),
      '# Part Two: The Sea',
      '## Chapter 1',
      prose('P2 C1'),
    ].join('\n\n');
    const anchors = await anchorsOf('sea.md', md);
    expect(describePlace(anchors, md.indexOf('at P2 C1.'))).toBe('Part Two, Chapter 1');
    expect(describePlace(anchors, md.indexOf('at P1 C2.'))).toBe('Part One, Chapter 2');

    const running = ['# Part One', '## Chapter 1', prose('C1'), '# Part Two', '## Chapter 2', prose('C2')].join('\n\n');
    expect(describePlace(await anchorsOf('running.md', running), running.indexOf('at C2.'))).toBe('Chapter 2');
    const plain = `Chapter 1\n\n${prose('one')}\n\nChapter 2\n\n${prose('two')}\n`;
    expect(describePlace(await anchorsOf('plain.txt', plain), plain.indexOf('at two.'))).toBe('Chapter 2');
  });

  it('names the parts in a book of a set, and reads each book of the set on its own', async () => {
    const war = novel(3);
    const short = `Chapter 1\n\n${prose('S1')}\n\nChapter 2\n\n${prose('S2')}\n`;
    const books = [
      { title: 'War and Peace', text: war, anchors: await anchorsOf('war.txt', war) },
      { title: 'short.txt', text: short, anchors: await anchorsOf('short.txt', short) },
    ];
    const spans = layBooks(books.map((b) => ({ title: b.title, chars: b.text.length })));
    const anchors = setAnchors(books, spans);
    expect(describePlace(anchors, spans[0]!.body + war.indexOf('at BOOK TWO II.'))).toBe('War and Peace · BOOK TWO, CHAPTER II');
    // The second book's chapters do not repeat in it: "Chapter 1" of another book makes them no less plain.
    expect(describePlace(anchors, spans[1]!.body + short.indexOf('at S2.'))).toBe('short.txt · Chapter 2');
  });
});
