import 'fake-indexeddb/auto';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { DEFAULT_TEMPLATES, INITIAL_MEMORY } from '../src/core/prompts';
import { loadQwenTokenizer, type QwenTokenizer } from '../src/engines/qwen-tokenizer';
import type { RunRequest } from '../src/agent/protocol';
import { wireParts } from './runner-setup';
import { GatedEngine } from './gated-engine';
import { RequestError } from '../src/jobs/request-error';
import { type RevisionRecord, type RunRecord, StaleRunError, Store } from '../src/storage/db';
import { corpusText } from './helpers';
import type { RunEvent } from '../src/agent/protocol';

const NEEDLE = 'The vault code for the Marlowe archive is 4829137.';
const QUESTION = 'What is the vault code for the Marlowe archive?';

let tok: QwenTokenizer;
let fileBytes: Uint8Array<ArrayBuffer>;

beforeAll(async () => {
  tok = await loadQwenTokenizer();
  const excerpt = corpusText('frankenstein.txt').slice(80_000, 110_000);
  const cut = excerpt.indexOf('. ', 17_000) + 2;
  fileBytes = new TextEncoder().encode(excerpt.slice(0, cut) + NEEDLE + ' ' + excerpt.slice(cut));
});

/** Everything the runner published, with a way to wait for a given event. */
class EventLog {
  readonly events: RunEvent[] = [];
  private waiters: { match: (e: RunEvent) => boolean; resolve: (e: RunEvent) => void }[] = [];

  publish = (event: RunEvent): void => {
    this.events.push(event);
    this.waiters = this.waiters.filter((w) => !(w.match(event) && (w.resolve(event), true)));
  };

  waitFor(match: (e: RunEvent) => boolean): Promise<RunEvent> {
    const seen = this.events.find(match);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve) => this.waiters.push({ match, resolve }));
  }

  done(runId: string): Promise<RunEvent> {
    return this.waitFor((e) => e.type === 'status' && e.runId === runId && (e.status === 'done' || e.status === 'failed'));
  }

  revisions(runId: string): number[] {
    return this.events.flatMap((e) => (e.type === 'revision' && e.runId === runId ? [e.index] : []));
  }
}

let dbCount = 0;
const stores: Store[] = [];

async function setup() {
  const store = await Store.open(`memagent-test-${++dbCount}`);
  stores.push(store);
  const engine = new GatedEngine(tok);
  const log = new EventLog();
  const { library, runner } = wireParts({
    store,
    createEngine: async () => engine,
    tokenizerFor: async () => tok,
    publish: log.publish,
  });
  return { store, engine, log, runner, library };
}

afterEach(() => {
  for (const s of stores.splice(0)) s.close();
});

function request(documentId: string, extra: Partial<RunRequest> = {}): RunRequest {
  return { documentId, question: QUESTION, engineId: 'extractive', chunkTokens: 600, memoryTokens: 128, ...extra };
}

const range = (n: number) => [...Array(n).keys()];

describe('Runner with the IndexedDB store', () => {
  it('stores the same file added twice as one document', async () => {
    const { store, library } = await setup();
    const first = await library.ingest('book.txt', fileBytes, 'extractive');
    const second = await library.ingest('same-book-renamed.txt', fileBytes.slice(), 'extractive');
    expect(second.id).toBe(first.id);
    expect(await store.listDocuments()).toHaveLength(1);
    expect(first.tokens).toBe(tok.count((await store.getText(first.id))!));
  });

  it('commits revisions 0..N-1 exactly once each, then ends done with the answer', async () => {
    const { store, log, runner, library } = await setup();
    const commit = vi.spyOn(store, 'commitRevision');
    const doc = await library.ingest('book.txt', fileBytes, 'extractive');
    const runId = await runner.start(request(doc.id));
    expect((await log.done(runId)) as unknown).toMatchObject({ status: 'done' });

    const run = (await store.getRun(runId))!;
    const n = run.chunks.length;
    expect(n).toBeGreaterThan(5);
    expect(commit.mock.calls.map(([revision]) => revision.index)).toEqual(range(n));
    expect((await store.listRevisions(runId)).map((r) => r.index)).toEqual(range(n));
    expect(log.revisions(runId)).toEqual(range(n));
    expect(run).toMatchObject({ status: 'done', nextChunk: n });
    expect(run.answer).toContain('4829137');
    expect(run.memory).toBe(await store.getMemory(runId, n - 1));
  });

  it('pauses in the middle of a step and resumes from the next chunk without a duplicate', async () => {
    // The reference: the same run read straight through.
    const straight = await setup();
    const refDoc = await straight.library.ingest('book.txt', fileBytes, 'extractive');
    const refId = await straight.runner.start(request(refDoc.id));
    await straight.log.done(refId);
    const reference = (await straight.store.getRun(refId))!;
    const n = reference.chunks.length;
    const referenceMemories = await Promise.all(range(n).map((i) => straight.store.getMemory(refId, i)));

    const { store, engine, log, runner, library } = await setup();
    const commit = vi.spyOn(store, 'commitRevision');
    const k = 3;
    engine.holdAt = k; // the step that reads chunk k waits at the gate
    const doc = await library.ingest('book.txt', fileBytes, 'extractive');
    const runId = await runner.start(request(doc.id));
    await engine.held;
    await runner.jobs.pause(runId);
    engine.open(); // the held step now finishes, after the pause
    expect(await engine.settled).toMatchObject({ name: 'AbortError' });
    await runner.jobs.settled(runId); // the reader is done: a wrongful commit would have landed

    let run = (await store.getRun(runId))!;
    expect(run).toMatchObject({ status: 'paused', nextChunk: k });
    expect((await store.listRevisions(runId)).map((r) => r.index)).toEqual(range(k));

    await runner.jobs.resume(runId);
    await log.done(runId);
    run = (await store.getRun(runId))!;
    expect(run.status).toBe('done');
    expect(commit.mock.calls.map(([revision]) => revision.index)).toEqual(range(n));
    expect((await store.listRevisions(runId)).map((r) => r.index)).toEqual(range(n));
    expect(log.revisions(runId)).toEqual(range(n));
    // Same memories and answer as the run that was never paused.
    expect(await Promise.all(range(n).map((i) => store.getMemory(runId, i)))).toEqual(referenceMemories);
    expect(run.answer).toBe(reference.answer);
  });

  it('refuses an empty question and stores nothing', async () => {
    const { store, log, runner, library } = await setup();
    const doc = await library.ingest('book.txt', fileBytes, 'extractive');
    const before = log.events.length;
    await expect(runner.start(request(doc.id, { question: '  \n ' }))).rejects.toThrow(RequestError);
    await expect(runner.start(request(doc.id, { question: '' }))).rejects.toThrow(/Enter a question/);
    expect(await store.listRuns()).toEqual([]);
    expect(log.events.length).toBe(before);
  });
});

describe('Store.commitRevision', () => {
  function runRecord(id: string): RunRecord {
    return {
      id,
      documentId: 'doc',
      documentName: 'doc.txt',
      question: 'Q?',
      engineId: 'extractive',
      settings: { requestedChunkTokens: 500, chunkTokens: 500, memoryTokens: 64, contextTokens: 1000, temperature: 0.7, topP: 0.95 },
      templates: { ...DEFAULT_TEMPLATES },
      chunks: [
        { start: 0, end: 10, tokens: 3 },
        { start: 10, end: 20, tokens: 3 },
      ],
      status: 'running',
      nextChunk: 0,
      memory: INITIAL_MEMORY,
      createdAt: 1,
      updatedAt: 1,
    };
  }

  function revision(runId: string, index: number): RevisionRecord {
    return {
      runId,
      index,
      memoryTokens: 2,
      wordsAdded: 2,
      wordsRemoved: 3,
      start: index * 10,
      end: index * 10 + 10,
      chunkTokens: 3,
      promptTokens: 40,
      completionTokens: 2,
      ms: 1,
      finishReason: 'stop',
      retries: 0,
      committedAt: 2,
    };
  }

  it('refuses a revision that is not the next chunk, and a chunk committed twice', async () => {
    const { store } = await setup();
    await store.createRun(runRecord('r1'));
    await expect(store.commitRevision(revision('r1', 1), 'skipped ahead')).rejects.toThrow(StaleRunError);
    expect(await store.listRevisions('r1')).toEqual([]);

    const after = await store.commitRevision(revision('r1', 0), 'memory 0');
    expect(after).toMatchObject({ nextChunk: 1, memory: 'memory 0' });
    await expect(store.commitRevision(revision('r1', 0), 'again')).rejects.toThrow(StaleRunError);
    await expect(store.commitRevision(revision('nope', 0), 'no run')).rejects.toThrow(StaleRunError);

    expect((await store.listRevisions('r1')).map((r) => r.index)).toEqual([0]);
    expect(await store.getMemory('r1', 0)).toBe('memory 0');
    expect(await store.getRun('r1')).toMatchObject({ nextChunk: 1, memory: 'memory 0' });
  });
});
