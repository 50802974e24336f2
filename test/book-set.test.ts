import { beforeAll, describe, expect, it } from 'vitest';
import { describePlace } from '../src/core/anchors';
import { bookAt, bookHeader, chunkAllBooks, chunkBooks, joinBooks, setAnchors } from '../src/core/book-set';
import { chunkAll } from '../src/core/chunker';
import { loadQwenTokenizer, type QwenTokenizer } from '../src/engines/qwen-tokenizer';
import { SetChunkSource } from '../src/runs/book-set';
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
    expect(describePlace(anchors, spans[2]!.start)).toBe('Harbour Notes');
    // One book alone is named as before, without a title.
    expect(describePlace(books[2]!.anchors ?? [], 5)).toBe('Chapter 4, p. 31');
  });

  it('plans the first chunk of a set without tokenizing the later books', async () => {
    const books = [{ title: 'Frankenstein', text: frankenstein }, ...three()];
    const { text, spans } = joinBooks(books);
    const { tokenizer, seen } = watching(tok);
    const source = new SetChunkSource(
      text,
      spans.map((s, i) => ({ ...s, documentId: `d${i}`, name: `b${i}`, title: books[i]!.title })),
      tokenizer,
      5000,
      [],
      () => {},
    );
    const first = await source.at(0);
    expect(first?.start).toBe(0);
    expect(seen.length).toBeGreaterThan(0);
    expect(seen.every((s) => !s.includes('Persuasion') && !s.includes('Kellynch'))).toBe(true);
  });

  it('resumes at a book boundary: after the last chunk of book 1 the next chunk is the header of book 2, cut as before', async () => {
    const { text, spans } = joinBooks(three());
    const all = chunkAllBooks(text, spans, tok, 200);
    const lastOfFirst = all.findLastIndex((c) => c.end <= spans[0]!.end);
    const known = all.slice(0, lastOfFirst + 1);
    const books = spans.map((s, i) => ({ ...s, documentId: `d${i}`, name: `b${i}`, title: `t${i}` }));
    const cuts: number[] = [];
    const source = new SetChunkSource(text, books, tok, 200, known, (spansSoFar) => cuts.push(spansSoFar.length));
    const next = await source.at(known.length);
    expect(next).toEqual(all[lastOfFirst + 1]);
    expect(text.slice(next!.start).startsWith('Document 2:\nThe Lighthouse\n')).toBe(true);
    const rest: unknown[] = [];
    for (let i = known.length; ; i++) {
      const c = await source.at(i);
      if (!c) break;
      rest.push(c);
    }
    expect([...known, ...rest]).toEqual(all);
    expect(cuts.length).toBeGreaterThan(0);
    // The generator also resumes from a chunk boundary inside a book.
    expect([...chunkBooks(text, spans, tok, 200, all[2]!.end)]).toEqual(all.slice(3));
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
