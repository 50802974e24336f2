import 'fake-indexeddb/auto';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Engine } from '../src/engines/engine';
import { ExtractiveEngine } from '../src/engines/extractive/engine';
import { loadQwenTokenizer, type QwenTokenizer } from '../src/engines/qwen-tokenizer';
import type { EvaluationRequest } from '../src/agent/protocol';
import { Evaluator } from '../src/runs/evaluator';
import { EngineCache } from '../src/jobs/engines';
import { RequestError } from '../src/jobs/request-error';
import { Store } from '../src/storage/db';
import { corpusText } from './helpers';
import { GatedEngine } from './gated-engine';
import type { EvaluationEvent } from '../src/agent/protocol';

let tok: QwenTokenizer;

beforeAll(async () => {
  tok = await loadQwenTokenizer();
});

class EventLog {
  readonly events: EvaluationEvent[] = [];
  private waiters: { match: (e: EvaluationEvent) => boolean; resolve: () => void }[] = [];

  publish = (event: EvaluationEvent): void => {
    this.events.push(event);
    this.waiters = this.waiters.filter((w) => !(w.match(event) && (w.resolve(), true)));
  };

  waitFor(match: (e: EvaluationEvent) => boolean): Promise<void> {
    if (this.events.some(match)) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ match, resolve }));
  }

  finished(id: string): Promise<void> {
    return this.waitFor((e) => e.type === 'status' && e.evaluationId === id && (e.status === 'done' || e.status === 'failed'));
  }

  samples(id: string): number[] {
    return this.events.flatMap((e) => (e.type === 'sample' && e.evaluationId === id ? [e.ordinal] : []));
  }
}

let dbCount = 0;
const stores: Store[] = [];

async function openStore(): Promise<Store> {
  const store = await Store.open(`memagent-eval-test-${++dbCount}`);
  stores.push(store);
  return store;
}

function evaluator(store: Store, engine: Engine = new ExtractiveEngine(tok)) {
  const log = new EventLog();
  return { log, engine, evaluator: new Evaluator({ store, engines: new EngineCache(async () => engine), publish: log.publish, stepIntervalMs: 0 }) };
}

afterEach(() => {
  for (const s of stores.splice(0)) s.close();
});

const K = 1024;
const request = (extra: Partial<EvaluationRequest> = {}): EvaluationRequest => ({
  engineId: 'extractive',
  tasks: ['niah_single_1', 'vt'],
  lengths: [8 * K],
  samples: 2,
  mode: 'memory',
  ...extra,
});

describe('Evaluator with the IndexedDB store', () => {
  it('stores every sample once, in order, and ends done', async () => {
    const store = await openStore();
    const { evaluator: e, log } = evaluator(store);
    const id = await e.start(request());
    await log.finished(id);

    const evaluation = (await store.getEvaluation(id))!;
    expect(evaluation).toMatchObject({ status: 'done', total: 4, completed: 4, haystack: { kind: 'generated' } });
    const samples = await store.listEvaluationSamples(id);
    expect(samples.map((s) => [s.ordinal, s.task, s.index, s.scores?.score])).toEqual([
      [0, 'niah_single_1', 0, 1],
      [1, 'niah_single_1', 1, 1],
      [2, 'vt', 0, 0.2],
      [3, 'vt', 1, 0.2],
    ]);
    expect(await store.listEvaluationOrdinals(id)).toEqual([0, 1, 2, 3]);
    expect((await store.listEvaluationSamples(id, 2)).map((s) => s.ordinal)).toEqual([2, 3]);
    expect(log.samples(id)).toEqual([0, 1, 2, 3]);
    expect(log.events.filter((ev) => ev.type === 'step').length).toBeGreaterThanOrEqual(8);
    expect((await store.listEvaluations())[0]!.id).toBe(id);
  });

  it('reads the same samples by MemAgent, then by InfMem with the extractive stand-ins, stored one after the other', async () => {
    const store = await openStore();
    const { evaluator: e, log } = evaluator(store);
    const id = await e.start(request({ tasks: ['niah_single_1'], methods: ['infmem', 'memagent'], earlyStop: 2 }));
    await log.finished(id);
    expect(await store.getEvaluation(id)).toMatchObject({ status: 'done', total: 4, completed: 4, spec: { methods: ['memagent', 'infmem'], earlyStop: 2 } });
    const samples = await store.listEvaluationSamples(id);
    expect(samples.map((s) => [s.ordinal, s.method, s.index])).toEqual([
      [0, 'memagent', 0],
      [1, 'memagent', 1],
      [2, 'infmem', 0],
      [3, 'infmem', 1],
    ]);
    for (const i of [0, 1]) {
      const [m, f] = [samples[i]!, samples[i + 2]!];
      expect(f.question).toBe(m.question);
      expect(f.documentTokens).toBe(m.documentTokens);
      expect(m).toMatchObject({ chunksRead: m.chunks, requests: m.chunks + 1 });
      expect(f.chunksRead).toBeLessThanOrEqual(f.chunks);
      expect(f.requests).toBeGreaterThan(f.chunksRead!);
    }
    expect(log.samples(id)).toEqual([0, 1, 2, 3]);
  });

  it('refuses InfMem where this page cannot run it', async () => {
    const store = await openStore();
    const { evaluator: e } = evaluator(store);
    await expect(e.start(request({ methods: ['infmem'], mode: 'full' }))).rejects.toThrow('choose the memory mode');
    await expect(e.start(request({ methods: ['infmem'], engineId: 'openai' }))).rejects.toThrow(
      /renders itself, and the openai engine takes chat messages only/,
    );
    await expect(e.start(request({ methods: ['infmem'], earlyStop: 0 }))).rejects.toThrow('The early stop must be a whole number of votes, 1 or more.');
    await expect(e.start(request({ methods: ['infmen' as 'infmem'] }))).rejects.toThrow(RequestError);
  });

  it('after the tab goes away mid-sample, another resumes from the next unfinished sample', async () => {
    const store = await openStore();
    const gated = new GatedEngine(tok);
    gated.holdAt = 7; // three calls a sample: the second step of sample 3 never returns
    const first = evaluator(store, gated);
    const id = await first.evaluator.start(request());
    await gated.held;
    expect(await store.listEvaluationOrdinals(id)).toEqual([0, 1]);
    expect((await store.getEvaluation(id))!.status).toBe('running');

    // A reload: a new worker finds the sweep still running and carries on.
    const second = evaluator(store);
    await second.evaluator.jobs.resume(id);
    await second.log.finished(id);
    expect(second.log.samples(id)).toEqual([2, 3]);
    expect(await store.listEvaluationOrdinals(id)).toEqual([0, 1, 2, 3]);
    expect((await store.getEvaluation(id))!).toMatchObject({ status: 'done', completed: 4 });

    // The old reader wakes up and finds its sample stored already: nothing is written twice.
    gated.open();
    await first.evaluator.jobs.settled(id);
    expect(first.log.samples(id)).toEqual([0, 1]);
    expect((await store.getEvaluation(id))!.completed).toBe(4);
  });

  it('pauses and resumes', async () => {
    const store = await openStore();
    const gated = new GatedEngine(tok);
    gated.holdAt = 4;
    const { evaluator: e, log } = evaluator(store, gated);
    const id = await e.start(request());
    await gated.held;
    await e.jobs.pause(id);
    gated.open();
    await e.jobs.settled(id);
    expect((await store.getEvaluation(id))!).toMatchObject({ status: 'paused', completed: 1 });
    await e.jobs.resume(id);
    await log.finished(id);
    expect(await store.listEvaluationOrdinals(id)).toEqual([0, 1, 2, 3]);
    expect(log.events).toContainEqual({ type: 'control', evaluationId: id, action: 'pause' });
  });

  it('a pause is heard between two steps of a long sample, not after the whole sample', async () => {
    // The extractive engine answers without ever waiting on anything: without a turn of the event loop between steps,
    // the pause (which waits on storage) would only be heard once every chunk of the sample was read and stored.
    const store = await openStore();
    const { evaluator: e, log } = evaluator(store);
    const id = await e.start(request({ tasks: ['niah_single_1'], lengths: [64 * K], samples: 1, chunkTokens: 1000 }));
    await log.waitFor((ev) => ev.type === 'step' && ev.evaluationId === id);
    const first = log.events.find((ev) => ev.type === 'step');
    const chunks = first?.type === 'step' ? first.chunks : 0;
    await e.jobs.pause(id);
    await e.jobs.settled(id);
    expect(chunks).toBeGreaterThan(50);
    expect(log.events.filter((ev) => ev.type === 'step').length).toBeLessThan(chunks);
    expect((await store.getEvaluation(id))!).toMatchObject({ status: 'paused', completed: 0 });
    expect(await store.listEvaluationOrdinals(id)).toEqual([]);
  });

  it('deletes a stopped sweep with its samples, and refuses one that is still running', async () => {
    const store = await openStore();
    const gated = new GatedEngine(tok);
    gated.holdAt = 4;
    const { evaluator: e, log } = evaluator(store, gated);
    const id = await e.start(request());
    await gated.held;
    await expect(e.delete(id)).rejects.toThrow(/still running: pause or cancel it, then delete it/);
    await e.jobs.pause(id);
    gated.open();
    await e.jobs.settled(id);
    expect(await store.listEvaluationOrdinals(id)).toEqual([0]);
    await e.delete(id);
    expect(await store.getEvaluation(id)).toBeUndefined();
    expect(await store.listEvaluationOrdinals(id)).toEqual([]);
    expect(await store.listEvaluations()).toEqual([]);
    expect(log.events.at(-1)).toEqual({ type: 'status', evaluationId: id, status: 'cancelled' });
  });

  it('fills the essay tasks from a stored document when asked', async () => {
    const store = await openStore();
    const text = corpusText('frankenstein.txt').slice(0, 60_000);
    await store.storeDocument(
      { id: 'doc-1', name: 'frankenstein.txt', bytes: text.length, encoding: 'UTF-8', chars: text.length, tokens: tok.count(text), addedAt: 0 },
      text,
    );
    const { evaluator: e, log } = evaluator(store);
    const id = await e.start(request({ tasks: ['niah_single_2'], samples: 1, documentId: 'doc-1' }));
    await log.finished(id);
    expect((await store.getEvaluation(id))!.haystack).toEqual({ kind: 'document', documentId: 'doc-1', name: 'frankenstein.txt' });
    expect((await store.listEvaluationSamples(id))[0]!.scores?.score).toBe(1);
  });

  it('refuses requests it cannot carry out, with what to change', async () => {
    const store = await openStore();
    const { evaluator: e } = evaluator(store);
    await expect(e.start(request({ tasks: [] }))).rejects.toThrow(RequestError);
    await expect(e.start(request({ lengths: [100] }))).rejects.toThrow(/1K to 64M/);
    await expect(e.start(request({ samples: 0 }))).rejects.toThrow(/Samples per cell/);
    await expect(e.start(request({ documentId: 'missing' }))).rejects.toThrow(/no longer stored/);
    await expect(e.start(request({ memoryTokens: 200_000 }))).rejects.toThrow(/memory size/);
    // Qwen3 models read with InfMem only: a MemAgent sweep or dataset evaluation with one is refused before the engine opens.
    const qwen3 = { engineId: 'webllm', engineConfig: { model: 'Qwen3-1.7B-q4f16_1-MLC' } };
    await expect(e.start(request(qwen3))).rejects.toThrow(/^Qwen3-1\.7B-q4f16_1-MLC is a Qwen3 model, which reads with InfMem only/);
    await expect(e.start(request({ ...qwen3, dataset: { files: [] } }))).rejects.toThrow(/reads with InfMem only/);
    expect(await store.listEvaluations()).toEqual([]);
  });
});
