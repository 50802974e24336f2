import { beforeAll, describe, expect, it } from 'vitest';
import { describePlace } from '../src/core/anchors';
import { bookAt, bookHeader, bookRange, chunkAllBooks, chunkBooks, joinBooks, layBooks, setAnchors } from '../src/core/book-set';
import { chunkAll } from '../src/core/chunker';
import { loadQwenTokenizer, type QwenTokenizer } from '../src/engines/qwen-tokenizer';
import { SetChunkSource, SetText } from '../src/runs/book-set';
import type { ChunkSpan } from '../src/core/chunker';
import type { Tokenizer } from '../src/core/tokenizer';
import { corpusText } from './helpers';

let tok: QwenTokenizer;
let frankenstein: string;

beforeAll(async () => {
  tok = await loadQwenTokenizer();
  frankenstein = corpusText('frankenstein.txt');
});

const three = () => [
  { title: 'Persuasion', text: 'Anne Elliot lived at Kellynch Hall. '.repeat(120), anchors: [{ at: 0, kind: 'chapter' as const, label: 'Chapter 1' }] },
  { title: 'The Lighthouse', text: 'The keeper of the lighthouse was named Orrin Vale. '.repeat(90) },
  {
    title: 'Harbour Notes',
    text: 'Orrin Vale was born in the town of Port Meridian. '.repeat(60),
    anchors: [
      { at: 0, kind: 'chapter' as const, label: 'Chapter 4' },
      { at: 0, kind: 'page' as const, label: '31' },
    ],
  },
];

/** A tokenizer that records what it was asked to split, to tell which books were tokenized. */
function watching(inner: Tokenizer): { tokenizer: Tokenizer; seen: string[] } {
  const seen: string[] = [];
  const tokenizer: Tokenizer = {
    ...inner,
    count: (s) => inner.count(s),
    pieces: (s) => {
      seen.push(s);
      return inner.pieces(s);
    },
  } as Tokenizer;
  return { tokenizer, seen };
}

/** A set's chunk source over `books`, as a run reads them, recording which books it reads from storage. */
function setSource(
  books: readonly { title: string; text: string }[],
  tokenizer: Tokenizer,
  chunkTokens: number,
  known: readonly ChunkSpan[] = [],
  onCut: (spans: readonly ChunkSpan[], done: boolean) => void = () => {},
) {
  const { spans } = joinBooks(books);
  const runBooks = spans.map((s, i) => ({ ...s, documentId: `d${i}`, name: `b${i}`, title: books[i]!.title }));
  const loads: string[] = [];
  const setText = new SetText(runBooks, async (b) => {
    loads.push(b.documentId);
    return books[Number(b.documentId.slice(1))]!.text;
  });
  return { source: new SetChunkSource(setText, { tokenizer, chunkTokens, known, onCut }), loads, setText };
}

describe('several books as one stream', () => {
  it('introduces each book the way RULER-HotpotQA introduces a document: "Document i:", the title, then the text', () => {
    const { text, spans } = joinBooks(three());
    expect(text.startsWith('Document 1:\nPersuasion\nAnne Elliot')).toBe(true);
    expect(text.slice(spans[1]!.start - 2, spans[1]!.body)).toBe('\n\nDocument 2:\nThe Lighthouse\n');
    expect(text.slice(spans[2]!.start, spans[2]!.body)).toBe(bookHeader(2, 'Harbour Notes'));
    for (const [i, b] of three().entries()) expect(text.slice(spans[i]!.body, spans[i]!.end)).toBe(b.text);
  });

  it('never cuts a chunk across two books, and covers every book from its header to its end', () => {
    const { text, spans } = joinBooks(three());
    const chunks = chunkAllBooks(text, spans, tok, 200);
    expect(chunks.length).toBeGreaterThan(3);
    for (const c of chunks) {
      const b = spans[bookAt(spans, c.start)]!;
      expect(c.end).toBeLessThanOrEqual(b.end);
      expect(c.tokens).toBeLessThanOrEqual(200);
    }
    // Each book's chunks are exactly the chunks of that book cut alone, its header included.
    for (const b of spans) {
      const own = chunks.filter((c) => c.start >= b.start && c.end <= b.end).map((c) => ({ ...c, start: c.start - b.start, end: c.end - b.start }));
      expect(own).toEqual(chunkAll(text.slice(b.start, b.end), tok, 200));
      expect(text.slice(own.length ? b.start + own[0]!.start : 0, b.body)).toMatch(/^Document \d+:\n/);
    }
  });

  it('names the book with the chapter and page of a place, and keeps a chapter from leaking into the next book', () => {
    const books = three();
    const { spans } = joinBooks(books);
    const anchors = setAnchors(books, spans);
    expect(describePlace(anchors, spans[0]!.body + 10)).toBe('Persuasion · Chapter 1');
    expect(describePlace(anchors, spans[1]!.body + 10)).toBe('The Lighthouse');
    expect(describePlace(anchors, spans[2]!.body + 5)).toBe('Harbour Notes · Chapter 4, p. 31');
    // A chunk that starts at a book's header is in the chapter and page its text begins with.
    expect(describePlace(anchors, spans[2]!.start)).toBe('Harbour Notes · Chapter 4, p. 31');
    expect(describePlace(anchors, spans[1]!.start)).toBe('The Lighthouse');
    // One book alone is named as before, without a title.
    expect(describePlace(books[2]!.anchors ?? [], 5)).toBe('Chapter 4, p. 31');
  });

  it('plans the first chunk of a set without reading or tokenizing the later books', async () => {
    const books = [{ title: 'Frankenstein', text: frankenstein }, ...three()];
    const { tokenizer, seen } = watching(tok);
    const { source, loads } = setSource(books, tokenizer, 5000);
    const first = await source.at(0);
    expect(first?.start).toBe(0);
    expect(seen.length).toBeGreaterThan(0);
    expect(seen.every((s) => !s.includes('Persuasion') && !s.includes('Kellynch'))).toBe(true);
    // Only the first book was read from storage.
    expect(loads).toEqual(['d0']);
  });

  it('reads each book when the reading reaches it and lets go of the books before the chunk being read', async () => {
    const { text, spans } = joinBooks(three());
    const all = chunkAllBooks(text, spans, tok, 200);
    const { source, loads, setText } = setSource(three(), tok, 200);
    for (let i = 0; i < all.length; i++) {
      const c = (await source.at(i))!;
      expect(c).toEqual(all[i]);
      // The loop takes each chunk's text from the set as soon as it has the chunk.
      expect(setText.slice(c.start, c.end)).toBe(text.slice(c.start, c.end));
    }
    expect(await source.at(all.length)).toBeUndefined();
    expect(loads).toEqual(['d0', 'd1', 'd2']);
    expect(() => setText.slice(all[0]!.start, all[0]!.end)).toThrow(/not loaded/);
  });

  it('resumes at a book boundary: after the last chunk of book 1 the next chunk is the header of book 2, cut as before', async () => {
    const { text, spans } = joinBooks(three());
    const all = chunkAllBooks(text, spans, tok, 200);
    const lastOfFirst = all.findLastIndex((c) => c.end <= spans[0]!.end);
    const known = all.slice(0, lastOfFirst + 1);
    const cuts: number[] = [];
    const { source, loads } = setSource(three(), tok, 200, known, (spansSoFar) => cuts.push(spansSoFar.length));
    const next = await source.at(known.length);
    expect(next).toEqual(all[lastOfFirst + 1]);
    expect(text.slice(next!.start).startsWith('Document 2:\nThe Lighthouse\n')).toBe(true);
    // The first book, read to its end before the resume, is not read again.
    expect(loads).toEqual(['d1']);
    const rest: unknown[] = [];
    for (let i = known.length; ; i++) {
      const c = await source.at(i);
      if (!c) break;
      rest.push(c);
    }
    expect([...known, ...rest]).toEqual(all);
    expect(cuts.length).toBeGreaterThan(0);
    // The generator also resumes from a chunk boundary inside a book.
    expect([...chunkBooks(text, spans, { tokenizer: tok, maxTokens: 200, from: all[2]!.end })]).toEqual(all.slice(3));
  });

  it('resumes inside the second book from the next chunk, with the first book never read', async () => {
    const { text, spans } = joinBooks(three());
    const all = chunkAllBooks(text, spans, tok, 200);
    const inSecond = all.findIndex((c) => c.start > spans[1]!.start);
    expect(bookAt(spans, all[inSecond]!.start)).toBe(1);
    const { source, loads, setText } = setSource(three(), tok, 200, all.slice(0, inSecond));
    const next = (await source.at(inSecond))!;
    expect(next).toEqual(all[inSecond]);
    expect(setText.slice(next.start, next.end)).toBe(text.slice(next.start, next.end));
    expect(loads).toEqual(['d1']);
  });

  it("lays out a set from its books' lengths exactly as joining their texts does, and says what a range of it holds", () => {
    const books = three();
    const { text, spans } = joinBooks(books);
    expect(layBooks(books.map((b) => ({ title: b.title, chars: b.text.length })))).toEqual(spans);
    expect(spans.at(-1)!.end).toBe(text.length);
    // A chunk from the second book's header into its text.
    const r = bookRange(spans, spans[1]!.start, spans[1]!.body + 20);
    expect(r).toEqual({ book: 1, headerFrom: 0, headerTo: spans[1]!.body - spans[1]!.start, from: 0, to: 20 });
    expect(bookHeader(1, 'The Lighthouse').slice(r.headerFrom, r.headerTo) + books[1]!.text.slice(r.from, r.to)).toBe(
      text.slice(spans[1]!.start, spans[1]!.body + 20),
    );
    // A chunk inside the third book holds no header.
    const inside = bookRange(spans, spans[2]!.body + 10, spans[2]!.body + 30);
    expect(inside).toMatchObject({ book: 2, from: 10, to: 30 });
    expect(inside.headerTo - inside.headerFrom).toBe(0);
  });

  it('reads a set of 100 small documents as one stream, each introduced and none split across two', () => {
    const docs = Array.from({ length: 100 }, (_, i) => ({ title: `Note ${i + 1}`, text: `Item ${i + 1} says the code is ${1000 + i}.` }));
    const { text, spans } = joinBooks(docs);
    const chunks = chunkAllBooks(text, spans, tok, 5000);
    // Small documents are never merged: each is a chunk of its own, starting at its header.
    expect(chunks).toHaveLength(100);
    chunks.forEach((c, i) => {
      expect(c.start).toBe(spans[i]!.start);
      expect(c.end).toBe(spans[i]!.end);
      expect(text.slice(c.start, c.end)).toBe(`Document ${i + 1}:\nNote ${i + 1}\nItem ${i + 1} says the code is ${1000 + i}.`);
    });
  });
});
