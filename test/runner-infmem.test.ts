/**
 * An InfMem read in the worker, with the extractive engine's stand-ins, over
 * the IndexedDB store: each chunk's plan, votes and retrieved passages (by
 * their places in the book) committed with its memory, the read stopped
 * early with where and after how many votes, a resume that goes on with the
 * stop votes it had, and the requests the app cannot read refused in words.
 */
import 'fake-indexeddb/auto';
import { beforeAll, describe, expect, it } from 'vitest';
import { ExtractiveEngine } from '../src/engines/extractive/engine';
import { extractiveInfmemAnswer } from '../src/engines/extractive/infmem-steps';
import { finalAnswer } from '../src/core/infmem/loop';
import { loadQwenTokenizer, type QwenTokenizer } from '../src/engines/qwen-tokenizer';
import type { RunEvent, RunRequest } from '../src/agent/protocol';
import { RUN_ANSWER } from '../src/storage/db';
import { buildExport, parseExport, toMarkdown } from '../src/storage/export';
import { corpusText, until } from './helpers';
import { testRunner } from './runner-setup';

const FACT = 'The lighthouse keeper Ortiz buried the brass compass under the old mill at Calloway.';
const QUESTION = 'Where did the lighthouse keeper Ortiz bury the brass compass?';
const frankenstein = corpusText('frankenstein.txt');
const at = frankenstein.indexOf('\n\n', 3000);
const BOOK = `${frankenstein.slice(0, at)}\n\n${FACT}${frankenstein.slice(at)}`;

let tok: QwenTokenizer;
beforeAll(async () => {
  tok = await loadQwenTokenizer();
}, 60_000);

const INFMEM = { kind: 'infmem', earlyStop: 3, thinking: true } as const;

async function setup(book = BOOK) {
  const parts = await testRunner(new ExtractiveEngine(tok), tok);
  const doc = await parts.library.ingest('frankenstein.txt', new TextEncoder().encode(book), 'extractive');
  const text = (await parts.store.getText(doc.id))!;
  const request = (extra: Partial<RunRequest> = {}): RunRequest => ({
    documentId: doc.id,
    question: QUESTION,
    engineId: 'extractive',
    method: INFMEM,
    ...extra,
  });
  const finished = (runId: string) => until(async () => (await parts.store.getRun(runId))?.status === 'done');
  return { ...parts, doc, text, request, finished };
}

describe('An InfMem read in the worker', () => {
  it('stores each plan and its passages, stops before the end and says where, with the votes', async () => {
    const { store, runner, events, text, request, finished } = await setup();
    const runId = await runner.start(request());
    await finished(runId);
    const run = (await store.getRun(runId))!;
    expect(run.method).toEqual(INFMEM);
    expect(run.chunks.length).toBeGreaterThan(10);
    expect(run.chunking).toBeUndefined();
    // Three chunks written, the read stopped before the fourth of twenty-odd, by three votes in a row.
    expect(run.nextChunk).toBe(3);
    expect(run.infmem?.stopped).toEqual({ index: 3, votes: 3 });
    expect(run.answer).toContain('under the old mill at Calloway');
    const revisions = await store.listRevisions(runId);
    expect(revisions.map((r) => [r.plan?.stop, r.plan?.votes])).toEqual([
      [false, 0],
      [true, 1],
      [true, 2],
    ]);
    const first = revisions[0]!.plan!;
    expect(first.queries[0]).toContain('ortiz');
    expect(first.retrieved).toHaveLength(4);
    // Each passage's place is its characters in the book: the fact's passage holds the fact there.
    const fact = first.retrieved.find((p) => text.slice(p.start, p.end).includes('brass compass'));
    expect(fact).toMatchObject({ chunk: 0 });
    expect(text.slice(fact!.start, fact!.end).startsWith(fact!.excerpt)).toBe(true);
    // Passages come from anywhere in the book, and each chunk's place is where the chunk lies.
    for (const p of first.retrieved) expect(p.start).toBeGreaterThanOrEqual(run.chunks[p.chunk]!.start);
    expect(revisions.map((r) => [r.start, r.end])).toEqual(run.chunks.slice(0, 3).map((c) => [c.start, c.end]));
    // Every revision was told after it was stored, then the end.
    const told = events.filter((e): e is Extract<RunEvent, { type: 'revision' }> => e.type === 'revision' && e.runId === runId).map((e) => e.index);
    expect(told).toEqual([0, 1, 2]);
  }, 60_000);

  it('resumed after a reload, goes on with the votes it had and stops where the read not stopped does', async () => {
    const { store, runner, request, finished } = await setup();
    const straightId = await runner.start(request());
    await finished(straightId);
    const straight = (await store.getRun(straightId))!;
    const revisions = await store.listRevisions(straightId);
    // The same read as a reload leaves it after chunk 2: reading, one vote to stop in a row, one search.
    const second = revisions[1]!;
    const history = straight.infmem!.history;
    const id = 'resumed';
    await store.importRun({
      run: {
        ...straight,
        id,
        status: 'running',
        answer: undefined,
        reply: undefined,
        finishedAt: undefined,
        nextChunk: 2,
        memory: (await store.getMemory(straightId, 1))!,
        infmem: { votes: second.plan!.votes, history },
      },
      revisions: revisions.slice(0, 2).map((r) => ({ ...r, runId: id })),
      memories: await Promise.all([0, 1].map(async (index) => ({ runId: id, index, memory: (await store.getMemory(straightId, index))! }))),
    });
    await runner.resumeReading();
    await finished(id);
    const resumed = (await store.getRun(id))!;
    expect(resumed.infmem?.stopped).toEqual({ index: 3, votes: 3 });
    expect(resumed.nextChunk).toBe(3);
    expect(resumed.answer).toBe(straight.answer);
    // Without its votes, the same state stops a chunk later: what was restored mattered.
    await store.importRun({
      run: { ...resumed, id: 'no-votes', status: 'running', nextChunk: 2, memory: (await store.getMemory(straightId, 1))!, infmem: { votes: 0, history } },
      revisions: revisions.slice(0, 2).map((r) => ({ ...r, runId: 'no-votes' })),
      memories: await Promise.all([0, 1].map(async (index) => ({ runId: 'no-votes', index, memory: (await store.getMemory(straightId, index))! }))),
    });
    await runner.resumeReading();
    await finished('no-votes');
    expect((await store.getRun('no-votes'))!.infmem?.stopped).toEqual({ index: 4, votes: 3 });
  }, 60_000);

  it('cites a fact found in a retrieved passage of a chunk it never read, at the step that retrieved it', async () => {
    // The fact planted past the middle of the book: BM25 finds it before the first chunk, and the read stops long before it.
    const far = frankenstein.indexOf('\n\n', Math.floor(frankenstein.length * 0.6));
    const { store, runner, text, request, finished } = await setup(`${frankenstein.slice(0, far)}\n\n${FACT}${frankenstein.slice(far)}`);
    const runId = await runner.start(request());
    await finished(runId);
    const run = (await store.getRun(runId))!;
    expect(run.answer).toContain('under the old mill at Calloway');
    expect(run.infmem?.stopped?.index).toBeLessThan(run.chunks.length / 2);
    await until(async () => (await store.getSources(runId, RUN_ANSWER)) !== undefined);
    const sources = (await store.getSources(runId, RUN_ANSWER))!;
    const cited = sources.citations.find((c) => c.sentence?.text.includes('brass compass'));
    expect(cited?.revision).toBe(0);
    expect(text.slice(cited!.sentence!.start, cited!.sentence!.end)).toBe(FACT);
    // Far past what the step read itself: the passage is the source.
    expect(cited!.sentence!.start).toBeGreaterThan(run.chunks[run.nextChunk]!.start);
    expect(sources.unsourced.filter((u) => u.text.includes('Calloway'))).toEqual([]);
  }, 60_000);

  it('reads a set of books as one stream, each passage placed in its book, and answers a follow-up from its final memory', async () => {
    const parts = await testRunner(new ExtractiveEngine(tok), tok);
    const first = await parts.library.ingest('first.txt', new TextEncoder().encode(frankenstein.slice(0, 60_000)), 'extractive');
    // The fact in the second book, which a set reads after the first.
    const second = await parts.library.ingest('second.txt', new TextEncoder().encode(`${FACT}\n\n${frankenstein.slice(60_000, 120_000)}`), 'extractive');
    const runId = await parts.runner.start({
      documentId: first.id,
      documentIds: [first.id, second.id],
      question: QUESTION,
      engineId: 'extractive',
      method: INFMEM,
    });
    await until(async () => (await parts.store.getRun(runId))?.status === 'done');
    const run = (await parts.store.getRun(runId))!;
    expect(run.books).toHaveLength(2);
    expect(run.answer).toContain('under the old mill at Calloway');
    const plan = (await parts.store.getRevision(runId, 0))!.plan!;
    // The fact opens the second book's text, in the set's text after the first book and the second's header line.
    const at = run.books![1]!.body;
    expect(plan.retrieved.some((p) => p.start <= at && at < p.end)).toBe(true);
    const asked = 'What did Ortiz bury under the old mill?';
    const followUp = await parts.runner.askFollowUp(runId, asked);
    expect(followUp.answer).toContain('brass compass');
    // InfMem's final step on the final memory, the stand-in's as the read's own answer was, not MemAgent's answer step.
    const final = await finalAnswer({ answer: extractiveInfmemAnswer }, { question: asked, memory: run.memory });
    expect([followUp.answer, followUp.reply]).toEqual([final.answer || final.final, final.final]);
    // A question with no room left beside the memory and the reply is refused in words, and nothing is stored.
    await expect(parts.runner.askFollowUp(runId, 'why '.repeat(140_000))).rejects.toThrow(/too long for the memory .* shorten it by about \d+ tokens/);
    expect(await parts.store.listFollowUps(runId)).toHaveLength(1);
  }, 60_000);

  it('reads several questions, each stopping on its own', async () => {
    const { store, runner, request, finished } = await setup();
    const ids = await runner.startMany(request(), [QUESTION, 'Who?']);
    for (const id of ids) await finished(id);
    const [a, b] = await Promise.all(ids.map(async (id) => (await store.getRun(id))!));
    expect(a!.infmem?.stopped).toEqual({ index: 3, votes: 3 });
    // A question with nothing to search votes at once: three chunks written on votes 1 and 2, stopped before the third.
    expect(b!.infmem?.stopped?.index).toBeLessThan(a!.infmem!.stopped!.index);
  }, 60_000);

  it('exports its method, plans, passages and where it stopped, and imports them back', async () => {
    const { store, runner, request, finished } = await setup();
    const runId = await runner.start(request());
    await finished(runId);
    const run = (await store.getRun(runId))!;
    const revisions = await store.listRevisions(runId);
    const json = JSON.stringify(buildExport({ run, revisions, memories: await store.listMemories(runId) }));
    const back = parseExport(json);
    expect(back.run.method).toEqual(INFMEM);
    expect(back.run.infmem).toEqual(run.infmem);
    expect(back.revisions.map((r) => r.plan)).toEqual(revisions.map((r) => r.plan));
    // The Markdown says the method, where it stopped, and each step's plan and passages.
    const markdown = toMarkdown(JSON.parse(json) as Parameters<typeof toMarkdown>[0]);
    expect(markdown).toContain(`Method: InfMem, stop after 3 votes in a row. Stopped before chunk 4 of ${run.chunks.length} after 3 votes`);
    expect(markdown).toMatch(/## Revision 1 \(chunk 1 of \d+\)\n\nPlan: searched "[^"]*ortiz[^"]*"\.\n\nRetrieved passages:\n\n1\. chunk \d+, characters/);
    expect(markdown).toContain('Plan: voted to stop (2 in a row).');
    // A passage that ends before it starts is refused, naming where.
    const bad = JSON.parse(json) as { revisions: { plan: { retrieved: { start: number; end: number }[] } }[] };
    bad.revisions[0]!.plan.retrieved[0]!.end = 0;
    bad.revisions[0]!.plan.retrieved[0]!.start = 5;
    expect(() => parseExport(JSON.stringify(bad))).toThrow(/revisions\.0\.plan\.retrieved\.0.*ends after it starts/);
  }, 60_000);

  it('refuses an engine that cannot continue a rendered prompt, a skim and an early stop out of range, in words', async () => {
    const { runner, request } = await setup();
    // This runner's engine for every id is the extractive one, which continues no rendered prompt: as a model's engine, it is refused.
    await expect(runner.start(request({ engineId: 'openai' }))).rejects.toThrow(/renders itself, and the openai engine takes chat messages only/);
    await expect(runner.start(request({ skim: { keep: 0.1, followMemory: false } }))).rejects.toThrow(/turn Skim off/);
    await expect(runner.start(request({ method: { ...INFMEM, earlyStop: 0 } }))).rejects.toThrow(/Stop after N votes.*1 to 100/);
  });
});
