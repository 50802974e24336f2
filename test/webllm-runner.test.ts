import 'fake-indexeddb/auto';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { ChatMessage, GenerateOptions, GenerateResult } from '../src/core/generation';
import type { Engine } from '../src/engines/engine';
import { DeviceLostError } from '../src/engines/errors';
import { loadQwenTokenizer, type QwenTokenizer } from '../src/engines/qwen-tokenizer';
import { wireParts } from './runner-setup';
import { Store } from '../src/storage/db';
import { corpusText } from './helpers';
import type { RunEvent } from '../src/agent/protocol';

let tok: QwenTokenizer;
let book: Uint8Array<ArrayBuffer>;
beforeAll(async () => {
  tok = await loadQwenTokenizer();
  book = new TextEncoder().encode(corpusText('frankenstein.txt').slice(50_000, 58_000));
});

/** An engine with WebLLM's hooks whose GPU is lost on the calls listed in `lose`. */
class LosingEngine implements Engine {
  readonly id = 'webllm';
  readonly contextWindow = 32_000;
  prepared: number[] = [];
  recovered: number[] = [];
  calls = 0;
  constructor(
    readonly tokenizer: QwenTokenizer,
    public lose: Set<number>,
  ) {}
  async prepare(contextTokens: number): Promise<void> {
    this.prepared.push(contextTokens);
  }
  async recover(attempt: number): Promise<void> {
    this.recovered.push(attempt);
  }
  async generate(_m: readonly ChatMessage[], options: GenerateOptions): Promise<GenerateResult> {
    const n = this.calls++;
    options.onToken?.('half a memo');
    if (this.lose.has(n)) throw new DeviceLostError('The GPU stopped responding (device lost).', { cause: new Error('GPUDevice.lost') });
    return {
      text: `memory after call ${n}`,
      finishReason: 'stop',
      usage: { promptTokens: 700, completionTokens: 6, prefillTokensPerSecond: 850, decodeTokensPerSecond: 24, timeToFirstTokenSeconds: 0.8 },
    };
  }
}

const stores: Store[] = [];
let n = 0;
afterEach(() => stores.splice(0).forEach((s) => s.close()));

async function setup(lose: number[]) {
  const store = await Store.open(`webllm-runner-${++n}`);
  stores.push(store);
  const engine = new LosingEngine(tok, new Set(lose));
  const events: RunEvent[] = [];
  let settle: (e: RunEvent) => void = () => undefined;
  const { library, runner } = wireParts({
    store,
    createEngine: async () => engine,
    tokenizerFor: async () => tok,
    publish: (e) => {
      events.push(e);
      if (e.type === 'status' && e.status !== 'running') settle(e);
    },
  });
  const settled = () => new Promise<RunEvent>((r) => (settle = r));
  const doc = await library.ingest('book.txt', book, 'webllm');
  return { store, engine, runner, events, settled, doc };
}

const request = (documentId: string) => ({ documentId, question: 'Who is the stranger?', engineId: 'webllm', chunkTokens: 500, memoryTokens: 64 });

describe('the runner with a GPU engine', () => {
  it('prepares the engine with the planned context, and records speeds on each revision', async () => {
    const { store, engine, runner, settled, doc } = await setup([]);
    const done = settled();
    const runId = await runner.start(request(doc.id));
    expect(await done).toMatchObject({ status: 'done' });
    const run = (await store.getRun(runId))!;
    expect(engine.prepared).toEqual([run.settings.contextTokens]);
    const revisions = await store.listRevisions(runId);
    expect(revisions[0]).toMatchObject({
      promptTokens: 700,
      completionTokens: 6,
      prefillTokensPerSecond: 850,
      decodeTokensPerSecond: 24,
      timeToFirstTokenSeconds: 0.8,
      retries: 0,
    });
  });

  it('after a device loss reloads and reads on from the last stored revision, counting the losses on the revision', async () => {
    const { store, engine, runner, events, settled, doc } = await setup([2, 3]);
    const done = settled();
    const runId = await runner.start(request(doc.id));
    expect(await done).toMatchObject({ status: 'done' });
    const run = (await store.getRun(runId))!;
    expect(engine.recovered).toEqual([1, 2]);
    expect(engine.prepared).toHaveLength(3);
    const revisions = await store.listRevisions(runId);
    expect(revisions.map((r) => r.index)).toEqual([...Array(run.chunks.length).keys()]);
    expect(revisions.map((r) => r.retries)).toEqual(revisions.map((r) => (r.index === 2 ? 2 : 0)));
    expect(await store.getMemory(runId, 2)).toBe('memory after call 4');
    expect(events.filter((e) => e.type === 'revision' && e.index === 2)).toHaveLength(1);
  });

  it('pauses with an alert after a fourth loss in a row, and Resume carries on', async () => {
    const { store, engine, runner, settled, doc } = await setup([1, 2, 3, 4]);
    let stopped = settled();
    const runId = await runner.start(request(doc.id));
    const paused = await stopped;
    expect(paused).toMatchObject({ status: 'paused' });
    expect((paused as { error: string }).error).toMatch(/device lost.*lost 4 times in a row, so the run is paused; press Resume/);
    expect(engine.recovered).toEqual([1, 2, 3]);
    expect((await store.getRun(runId))!.nextChunk).toBe(1);
    stopped = settled();
    await runner.jobs.resume(runId);
    expect(await stopped).toMatchObject({ status: 'done' });
    expect((await store.getRun(runId))!.error).toBeUndefined();
  });
});
