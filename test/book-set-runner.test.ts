import { beforeAll, describe, expect, it, vi } from 'vitest';
import { bookAt } from '../src/core/book-set';
import type { Engine } from '../src/engines/engine';
import { ExtractiveEngine } from '../src/engines/extractive/engine';
import { loadQwenTokenizer, type QwenTokenizer } from '../src/engines/qwen-tokenizer';
import { ChunkLists } from '../src/core/chunk-lists';
import { EngineCache } from '../src/jobs/engines';
import { MAX_JOINED_CHARS } from '../src/runs/book-set';
import { planRuns } from '../src/runs/plan';
import { corpusBytes, corpusText } from './helpers';
import { bytes, FACT_1, FACT_2, QUESTION, setRequest, threeTexts, whenDone } from './book-set-fixtures';
import { GatedEngine } from './gated-engine';
import { testRunner, until } from './runner-setup';
import { chunkCount } from '../src/core/estimate';

let tok: QwenTokenizer;

beforeAll(async () => {
  tok = await loadQwenTokenizer();
});

async function threeBooks(engine: Engine = new ExtractiveEngine(tok)) {
  const setup = await testRunner(engine, tok);
  const ids: string[] = [];
  for (const { name, text } of threeTexts()) ids.push((await setup.library.ingest(name, bytes(text), 'extractive')).id);
  return { ...setup, ids };
}

describe('a run over a set of books', () => {
  it('answers a two-hop question from facts in two different books, every chunk within one book', async () => {
    const { runner, store, ids } = await threeBooks();
    const runId = await runner.start(setRequest(ids));
    const run = await whenDone(store, runId);
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
    const runId = await runner.start(setRequest(ids));
    const straight = await whenDone(store, runId);
    const boundary = straight.chunks.findIndex((c) => c.start === straight.books![1]!.start);
    expect(boundary).toBeGreaterThan(0);

    // The same run paused while it reads the second book's header: the first book is read, the step in hand is dropped.
    const gated = new GatedEngine(tok);
    gated.holdAt = boundary;
    const again = await threeBooks(gated);
    const id2 = await again.runner.start(setRequest(again.ids));
    await gated.held;
    await again.runner.jobs.pause(id2);
    gated.open();
    expect(await gated.settled).toMatchObject({ name: 'AbortError' });
    await until(async () => (await again.store.getRun(id2))?.status === 'paused');
    expect(await again.store.getRun(id2)).toMatchObject({ status: 'paused', nextChunk: boundary });
    expect((await again.store.listRevisions(id2)).map((r) => r.index)).toEqual(straight.chunks.slice(0, boundary).map((_, i) => i));
    await again.runner.jobs.resume(id2);
    const resumed = await whenDone(again.store, id2);
    expect(resumed.chunks).toEqual(straight.chunks);
    const after = await again.store.listRevisions(id2);
    expect(after.map((r) => r.index)).toEqual(straight.chunks.map((_, i) => i));
    expect(after[boundary]!.start).toBe(resumed.books![1]!.start);
    expect(resumed.answer).toBe(straight.answer);
  });
});

describe('a set of books planned and skimmed as one', () => {
  const FIRST = 'Ada Lovelace runs the Marlowe archive.';
  const SECOND = 'The vault code for the Marlowe archive is 4829137.';
  const QUESTION_2 = 'What number belongs to the place Ada Lovelace runs?';
  let body: string;
  beforeAll(() => {
    body = corpusText('frankenstein.txt').slice(30_000, 130_000);
  });
  /** Three books cut from one text, with `early` planted in the first and `late` in the third. */
  const books = (early: string, late: string) => {
    const third = Math.floor(body.length / 3);
    const cut = (from: number) => body.slice(from, from + third);
    return [
      `${cut(0).slice(0, 15_000)}\n\n${early}\n\n${cut(0).slice(15_000)}`,
      cut(third),
      `${cut(2 * third).slice(0, 15_000)}\n\n${late}\n\n${cut(2 * third).slice(15_000)}`,
    ];
  };

  async function readSet(texts: string[], question: string, skim?: { keep: number; followMemory: boolean; lookBack?: boolean }) {
    const { library, store, runner } = await testRunner(new ExtractiveEngine(tok), tok);
    const ids: string[] = [];
    for (const [i, t] of texts.entries()) ids.push((await library.ingest(`book-${i + 1}.txt`, bytes(t), 'extractive')).id);
    const runId = await runner.start(setRequest(ids, { question, chunkTokens: 500, skim }));
    const planned = (await store.getRun(runId))!;
    const run = await whenDone(store, runId, 1000);
    const setText = run.books!.map((b, i) => `Document ${i + 1}:\n${b.title}\n${texts[i]}`).join('\n\n');
    return {
      planned,
      run,
      revisions: await store.listRevisions(runId),
      covers: (r: { start: number; end: number }, s: string) => setText.slice(r.start, r.end).includes(s),
    };
  }

  it('estimates the chunks of the whole set before it is cut, each book ending in a chunk of its own', async () => {
    const { planned, run } = await readSet(books(FIRST, SECOND), QUESTION_2);
    expect(planned.chunking?.estimate).toBeGreaterThanOrEqual(3);
    // The estimate counts from token counts; the cut adds each book's header and its own last chunk.
    expect(Math.abs(planned.chunking!.estimate - run.chunks.length)).toBeLessThanOrEqual(3);
    expect(run.chunking).toBeUndefined();
  });

  it('ranks the chunks of every book together when skimming, reading the chosen ones across books in order', async () => {
    const { run, revisions, covers } = await readSet(books(FIRST, SECOND), 'What is the vault code for the Marlowe archive?', {
      keep: 0.05,
      followMemory: false,
    });
    const all = await readSet(books(FIRST, SECOND), 'What is the vault code for the Marlowe archive?');
    expect(run.skim!.totalChunks).toBe(all.run.chunks.length);
    expect(revisions.length).toBeLessThan(all.run.chunks.length / 3);
    expect(revisions.some((r) => covers(r, SECOND))).toBe(true);
    expect(bookAt(run.books!, revisions.find((r) => covers(r, SECOND))!.start)).toBe(2);
    expect(revisions.map((r) => r.start)).toEqual([...revisions.map((r) => r.start)].sort((a, b) => a - b));
    expect(run.answer).toContain('4829137');
  });

  it('follows a name the memory found in the first book to a chunk of the third', async () => {
    const without = await readSet(books(FIRST, SECOND), QUESTION_2, { keep: 0.05, followMemory: false });
    expect(without.revisions.some((r) => without.covers(r, SECOND))).toBe(false);
    const followed = await readSet(books(FIRST, SECOND), QUESTION_2, { keep: 0.05, followMemory: true });
    const second = followed.run.chunks.find((c) => followed.covers(c, SECOND))!;
    expect(second.reason).toEqual({ by: 'followed', name: 'Marlowe' });
    expect(bookAt(followed.run.books!, second.start)).toBe(2);
    expect(bookAt(followed.run.books!, followed.run.chunks.find((c) => followed.covers(c, FIRST))!.start)).toBe(0);
  });

  it('looks back from the third book to a chunk of the first that a name points to', async () => {
    const forward = await readSet(books(SECOND, FIRST), QUESTION_2, { keep: 0.05, followMemory: true });
    expect(forward.revisions.some((r) => forward.covers(r, SECOND))).toBe(false);
    const back = await readSet(books(SECOND, FIRST), QUESTION_2, { keep: 0.05, followMemory: true, lookBack: true });
    const earlier = back.run.chunks.find((c) => back.covers(c, SECOND))!;
    expect(earlier.reason).toEqual({ by: 'looked-back', name: 'Marlowe' });
    expect(bookAt(back.run.books!, earlier.start)).toBe(0);
    expect(back.revisions.some((r) => back.covers(r, SECOND))).toBe(true);
  });
});

describe('the sizes of sets the app is tested with', () => {
  it('reads a set of 100 small documents as one stream, a chunk for each, and answers from facts in two of them', async () => {
    const { library, store, runner } = await testRunner(new ExtractiveEngine(tok), tok);
    const ids: string[] = [];
    for (let i = 0; i < 100; i++) {
      const fact = i === 36 ? ` ${FACT_1}` : i === 80 ? ` ${FACT_2}` : '';
      const text = `Note ${i + 1}. The tide table for pier ${i + 1} was checked on day ${200 + i}.${fact} The lamp was trimmed at dusk.`;
      ids.push((await library.ingest(`note-${String(i + 1).padStart(3, '0')}.txt`, bytes(text), 'extractive')).id);
    }
    const runId = await runner.start(setRequest(ids, { chunkTokens: 5000 }));
    const run = await whenDone(store, runId);
    expect(run.books).toHaveLength(100);
    expect(run.chunks).toHaveLength(100);
    const revisions = await store.listRevisions(runId);
    // Small documents are never merged: each is read in a step of its own, from its header to its end.
    revisions.forEach((r, i) => expect([r.start, r.end]).toEqual([run.books![i]!.start, run.books![i]!.end]));
    expect(run.answer).toContain(FACT_1);
    expect(run.answer).toContain('Port Meridian');
  });

  it('reads a set of three novels, one a PDF, reading each book only when the reading reaches it', async () => {
    const timeline: string[] = [];
    const { library, store, runner } = await testRunner(new ExtractiveEngine(tok), tok, {
      publish: (e) => {
        if (e.type === 'revision' && e.index === 0) timeline.push('first revision');
      },
    });
    const novel = corpusText('frankenstein.txt');
    const plant = (text: string, at: number, fact: string) => {
      const cut = text.indexOf('\n\n', Math.floor(text.length * at));
      return `${text.slice(0, cut)}\n\n${fact}${text.slice(cut)}`;
    };
    // The same novel's paragraphs backwards: a third book as long as the first, and not the same file.
    const backwards = novel.split('\n\n').reverse().join('\n\n');
    const first = await library.ingest('frankenstein.txt', bytes(plant(novel, 0.7, FACT_1)), 'extractive');
    const second = await library.ingest('pride-and-prejudice.pdf', corpusBytes('pride-and-prejudice.pdf'), 'extractive');
    const third = await library.ingest('frankenstein-backwards.txt', bytes(plant(backwards, 0.3, FACT_2)), 'extractive');
    const ids = [first.id, second.id, third.id];
    expect(second.tokens).toBeGreaterThan(100_000);
    const readText = store.readText.bind(store);
    vi.spyOn(store, 'readText').mockImplementation((id, start, end) => {
      timeline.push(`read ${ids.indexOf(id) + 1}`);
      return readText(id, start, end);
    });
    const runId = await runner.start(setRequest(ids, { chunkTokens: 5000, memoryTokens: 512 }));
    const run = await whenDone(store, runId, 6000);
    expect(run.status).toBe('done');
    // The second book was read from storage after the first step, not before it.
    expect(timeline.indexOf('first revision')).toBeGreaterThanOrEqual(0);
    expect(timeline.indexOf('read 2')).toBeGreaterThan(timeline.indexOf('first revision'));
    const books = run.books!;
    const revisions = await store.listRevisions(runId);
    expect(revisions).toHaveLength(run.chunks.length);
    expect(run.chunks.length).toBeGreaterThan(60);
    for (const r of revisions) expect(r.end).toBeLessThanOrEqual(books[bookAt(books, r.start)]!.end);
    for (const b of books) expect(revisions.some((r) => r.start === b.start)).toBe(true);
    // The one memory carries the facts of the first and the third book to the end (a novel holds other births to weigh against them).
    expect(run.memory).toContain(FACT_1);
    expect(run.memory).toContain(FACT_2);
    expect(run.answer).toContain(FACT_1);
  });
});

describe('how many books a set may hold', () => {
  it('lays out a set longer than one browser text when it is read in full, and says why a skim of it cannot be', async () => {
    const { library, store } = await testRunner(new ExtractiveEngine(tok), tok);
    // Records of three books of 200 million characters each (the per-book limit is on files: 256 MB each); planning reads only records.
    const ids = ['big-1', 'big-2', 'big-3'];
    for (const id of ids) {
      await store.storeDocument({ id, name: `${id}.txt`, bytes: 200_000_000, encoding: 'utf-8', chars: 200_000_000, tokens: 50_000_000, addedAt: 0 }, 'x');
    }
    const deps = { store, library, engines: new EngineCache(async () => new ExtractiveEngine(tok)), lists: new ChunkLists() };
    const { question: _, ...request } = setRequest(ids, { chunkTokens: 5000 });
    const [run] = await planRuns(deps, request, [QUESTION]);
    expect(run!.books!.at(-1)!.end).toBeGreaterThan(MAX_JOINED_CHARS);
    // Each book is cut on its own: three times one book's count.
    expect(run!.chunking).toEqual({ estimate: 3 * chunkCount(50_000_000, 5000) });
    await expect(planRuns(deps, { ...request, skim: { keep: 0.1, followMemory: false } }, [QUESTION])).rejects.toThrow(
      /600 million characters together, more than a browser keeps in one text \(536 million\), which a skim of a set needs\. Read them without skimming/,
    );
  });
});
