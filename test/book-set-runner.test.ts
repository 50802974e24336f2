import { beforeAll, describe, expect, it } from 'vitest';
import { bookAt } from '../src/core/book-set';
import type { Engine } from '../src/engines/engine';
import { ExtractiveEngine } from '../src/engines/extractive/engine';
import { loadQwenTokenizer, type QwenTokenizer } from '../src/engines/qwen-tokenizer';
import { corpusText } from './helpers';
import { GatedEngine } from './gated-engine';
import { testRunner, until } from './runner-setup';

let tok: QwenTokenizer;
let filler: string;
const QUESTION = 'Where was the warden of Gull Rock born?';
// Two hops: who is warden of Gull Rock (the first book), and where that person was born (the third).
const FACT_1 = 'The warden of Gull Rock is Orrin Vale.';
const FACT_2 = 'Orrin Vale was born in Port Meridian, far from Gull Rock.';

beforeAll(async () => {
  tok = await loadQwenTokenizer();
  filler = corpusText('frankenstein.txt').slice(90_000, 96_000);
});

const bytes = (s: string) => new TextEncoder().encode(s) as Uint8Array<ArrayBuffer>;

async function threeBooks(engine: Engine = new ExtractiveEngine(tok)) {
  const setup = await testRunner(engine, tok);
  const { library } = setup;
  const a = await library.ingest('harbour.txt', bytes(`${filler}\n\n${FACT_1}\n\n${filler}`), 'extractive');
  const b = await library.ingest('weather.txt', bytes(filler.slice(2000) + filler.slice(0, 2000)), 'extractive');
  const c = await library.ingest('families.txt', bytes(`${filler.slice(3000)}\n\n${FACT_2}\n\n${filler.slice(0, 3000)}`), 'extractive');
  return { ...setup, ids: [a.id, b.id, c.id] };
}

describe('a run over a set of books', () => {
  it('answers a two-hop question from facts in two different books, every chunk within one book', async () => {
    const { runner, store, ids } = await threeBooks();
    const runId = await runner.start({
      documentId: ids[0]!,
      documentIds: ids,
      question: QUESTION,
      engineId: 'extractive',
      chunkTokens: 600,
      memoryTokens: 256,
    });
    await until(async () => (await store.getRun(runId))?.status === 'done');
    const run = (await store.getRun(runId))!;
    expect(run.status).toBe('done');
    expect(run.books?.map((b) => b.name)).toEqual(['harbour.txt', 'weather.txt', 'families.txt']);
    expect(run.documentName).toBe('harbour.txt + weather.txt + families.txt');
    expect(run.answer).toContain(FACT_1);
    expect(run.answer).toContain('Port Meridian');
    const books = run.books!;
    const revisions = await store.listRevisions(runId);
    expect(revisions).toHaveLength(run.chunks.length);
    for (const r of revisions) expect(r.end).toBeLessThanOrEqual(books[bookAt(books, r.start)]!.end);
    // Every book is read, each from its header.
    for (const b of books) expect(revisions.some((r) => r.start === b.start)).toBe(true);
  });

  it('resumes after a pause at a book boundary from the next chunk, the header of the next book', async () => {
    const { runner, store, ids } = await threeBooks();
    const runId = await runner.start({
      documentId: ids[0]!,
      documentIds: ids,
      question: QUESTION,
      engineId: 'extractive',
      chunkTokens: 600,
      memoryTokens: 256,
    });
    await until(async () => (await store.getRun(runId))?.status === 'done');
    const straight = (await store.getRun(runId))!;
    const boundary = straight.chunks.findIndex((c) => c.start === straight.books![1]!.start);
    expect(boundary).toBeGreaterThan(0);

    // The same run paused while it reads the second book's header: the first book is read, the step in hand is dropped.
    const gated = new GatedEngine(tok);
    gated.holdAt = boundary;
    const again = await threeBooks(gated);
    const id2 = await again.runner.start({
      documentId: again.ids[0]!,
      documentIds: again.ids,
      question: QUESTION,
      engineId: 'extractive',
      chunkTokens: 600,
      memoryTokens: 256,
    });
    await gated.held;
    await again.runner.jobs.pause(id2);
    gated.open();
    expect(await gated.settled).toMatchObject({ name: 'AbortError' });
    await until(async () => (await again.store.getRun(id2))?.status === 'paused');
    expect(await again.store.getRun(id2)).toMatchObject({ status: 'paused', nextChunk: boundary });
    expect((await again.store.listRevisions(id2)).map((r) => r.index)).toEqual(straight.chunks.slice(0, boundary).map((_, i) => i));
    await again.runner.jobs.resume(id2);
    await until(async () => (await again.store.getRun(id2))?.status === 'done');
    const resumed = (await again.store.getRun(id2))!;
    expect(resumed.chunks).toEqual(straight.chunks);
    const after = await again.store.listRevisions(id2);
    expect(after.map((r) => r.index)).toEqual(straight.chunks.map((_, i) => i));
    expect(after[boundary]!.start).toBe(resumed.books![1]!.start);
    expect(resumed.answer).toBe(straight.answer);
  });
});
