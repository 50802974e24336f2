import { beforeAll, describe, expect, it } from 'vitest';
import { ChunkLists } from '../src/core/chunk-lists';
import { type ChunkSpan, chunkAll } from '../src/core/chunker';
import type { Tokenizer } from '../src/core/tokenizer';
import { loadQwenTokenizer } from '../src/engines/qwen-tokenizer';
import { corpusText } from './helpers';

let qwen: Tokenizer;
const text = corpusText('frankenstein.txt').slice(0, 60_000);

beforeAll(async () => {
  qwen = await loadQwenTokenizer();
});

/** The Qwen tokenizer, counting how often a text is cut into pieces (what cutting a book into chunks costs). */
function counting(inner: Tokenizer): Tokenizer & { cuts: number } {
  const t = {
    name: inner.name,
    cuts: 0,
    encode: (s: string) => inner.encode(s),
    decode: (ids: readonly number[]) => inner.decode(ids),
    count: (s: string) => inner.count(s),
    pieces(s: string) {
      t.cuts++;
      return inner.pieces(s);
    },
  };
  return t;
}

async function readAll(source: { at(i: number): Promise<ChunkSpan | undefined> }): Promise<ChunkSpan[]> {
  const out: ChunkSpan[] = [];
  for (let i = 0; ; i++) {
    const span = await source.at(i);
    if (!span) return out;
    out.push(span);
  }
}

describe('ChunkLists', () => {
  it('two runs over the same book and chunk size read one list, cut once, equal to cutting it whole', async () => {
    const tokenizer = counting(qwen);
    const lists = new ChunkLists();
    const key = { documentId: 'book', tokenizer, chunkTokens: 500 };
    const heard: number[][] = [[], []];
    const a = lists.open(key, text, [], (spans) => heard[0]!.push(spans.length));
    const b = lists.open(key, text, [], (spans) => heard[1]!.push(spans.length));
    const [fromA, fromB] = await Promise.all([readAll(a), readAll(b)]);
    expect(tokenizer.cuts).toBe(1);
    const whole = chunkAll(text, qwen, 500);
    expect(whole.length).toBeGreaterThan(20);
    expect(fromA).toEqual(whole);
    expect(fromB).toEqual(whole);
    // Both runs hear of the finished list, to store it on their own records.
    expect(heard[0]!.at(-1)).toBe(whole.length);
    expect(heard[1]!.at(-1)).toBe(whole.length);
    expect(a.span(3)).toEqual(whole[3]);
    a.release();
    b.release();
    // A skim of the same book then ranks the list already cut.
    expect(lists.whole(key, text)).toEqual(whole);
    expect(tokenizer.cuts).toBe(1);
  });

  it('another chunk size or tokenizer is another list', async () => {
    const tokenizer = counting(qwen);
    const lists = new ChunkLists(4);
    const small = await readAll(lists.open({ documentId: 'book', tokenizer, chunkTokens: 400 }, text, []));
    const large = await readAll(lists.open({ documentId: 'book', tokenizer, chunkTokens: 800 }, text, []));
    expect(tokenizer.cuts).toBe(2);
    expect(small).toEqual(chunkAll(text, qwen, 400));
    expect(large).toEqual(chunkAll(text, qwen, 800));
    const other = counting(qwen);
    lists.whole({ documentId: 'book', tokenizer: other, chunkTokens: 400 }, text);
    expect(other.cuts).toBe(1);
  });

  it('a run that joins late hears at once of the chunks cut before it came', async () => {
    const lists = new ChunkLists();
    const key = { documentId: 'book', tokenizer: qwen, chunkTokens: 500 };
    const first = lists.open(key, text, []);
    const all = await readAll(first);
    const heard: { known: number; done: boolean }[] = [];
    const late = lists.open(key, text, [], (spans, done) => heard.push({ known: spans.length, done }));
    await Promise.resolve();
    expect(heard).toEqual([{ known: all.length, done: true }]);
    expect(await readAll(late)).toEqual(all);
    first.release();
    late.release();
  });

  it('a resumed run keeps the chunks it stored, and the list cuts on after them', async () => {
    const tokenizer = counting(qwen);
    const lists = new ChunkLists();
    const whole = chunkAll(text, qwen, 500);
    const known = whole.slice(0, 10);
    const resumed = lists.open({ documentId: 'book', tokenizer, chunkTokens: 500 }, text, known);
    expect(await readAll(resumed)).toEqual(whole);
    resumed.release();
  });

  it('the last run to let go of a list still being cut stops it; a finished one is kept for the next read', async () => {
    const lists = new ChunkLists(1);
    // The whole book, so that its cutting is surely still going on after the first chunk.
    const book = corpusText('frankenstein.txt');
    const a = lists.open({ documentId: 'long', tokenizer: qwen, chunkTokens: 200 }, book, []);
    const b = lists.open({ documentId: 'long', tokenizer: qwen, chunkTokens: 200 }, book, []);
    await a.at(0);
    a.release();
    b.release();
    expect(lists.size).toBe(0);
    const key = { documentId: 'book', tokenizer: qwen, chunkTokens: 200 };
    const c = lists.open(key, text, []);
    await readAll(c);
    c.release();
    expect(lists.size).toBe(1);
    lists.whole({ ...key, documentId: 'other' }, text.slice(0, 5_000));
    expect(lists.size).toBe(1); // only the most recent finished list is kept
    lists.forget('other');
    expect(lists.size).toBe(0);
  });
});
