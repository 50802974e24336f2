import { beforeAll, describe, expect, it } from 'vitest';
import { ChunkFeed } from '../src/core/chunk-feed';
import { chunkAll, chunkText } from '../src/core/chunker';
import { ExtractiveEngine } from '../src/engines/extractive/engine';
import { loadQwenTokenizer, type QwenTokenizer } from '../src/engines/qwen-tokenizer';
import { corpusText } from './helpers';
import { testRunner, until } from './runner-setup';
import { chunkCount } from '../src/core/estimate';

let tok: QwenTokenizer;
let book: string;
beforeAll(async () => {
  tok = await loadQwenTokenizer();
  book = corpusText('frankenstein.txt').slice(0, 200_000);
});

describe('cutting from a chunk boundary', () => {
  it('gives exactly the chunks that cutting from the start gives after it', () => {
    for (const size of [300, 1000, 5000]) {
      const all = chunkAll(book, tok, size);
      for (const k of [1, Math.floor(all.length / 2), all.length - 1]) {
        expect([...chunkText(book, tok, size, all[k]!.start)]).toEqual(all.slice(k));
      }
    }
  });

  it('lets a feed resumed with the chunks stored before a reload finish the same list', async () => {
    const all = chunkAll(book, tok, 700);
    const feed = new ChunkFeed({ text: book, tokenizer: tok, maxTokens: 700, spans: all.slice(0, 9) });
    expect(await feed.at(all.length)).toBeUndefined();
    expect(feed.spans).toEqual(all);
  });
});

describe('a book read while it is still being cut', () => {
  it('commits its first revision before the count is exact, and ends with the exact chunks', async () => {
    const { library, store, events, runner } = await testRunner(new ExtractiveEngine(tok), tok);
    const text = book.repeat(3);
    const doc = await library.ingest('book.txt', new TextEncoder().encode(text), 'extractive');
    const runId = await runner.start({ documentId: doc.id, question: 'Who is Elizabeth?', engineId: 'extractive', chunkTokens: 400, memoryTokens: 128 });
    const started = (await store.getRun(runId))!;
    expect(started.chunks).toEqual([]);
    expect(started.chunking!.estimate).toBe(chunkCount(doc.tokens, 400));

    await until(async () => (await store.getRun(runId))?.status === 'done');
    const run = (await store.getRun(runId))!;
    const exact = chunkAll((await store.getText(doc.id))!, tok, 400);
    expect(run.status).toBe('done');
    expect(run.chunking).toBeUndefined();
    expect(run.chunks).toEqual(exact);
    expect((await store.listRevisions(runId)).map((r) => [r.index, r.start, r.end])).toEqual(exact.map((c, i) => [i, c.start, c.end]));
    const firstRevision = events.findIndex((e) => e.type === 'revision');
    const exactCount = events.findIndex((e) => e.type === 'chunks' && e.done);
    expect(firstRevision).toBeGreaterThanOrEqual(0);
    expect(firstRevision).toBeLessThan(exactCount);
  });
});
