import { beforeAll, describe, expect, it } from 'vitest';
import type { BatchRequest } from '../src/core/batch';
import type { ChatMessage, GenerateOptions, GenerateResult } from '../src/core/generation';
import type { BatchLimit, Engine } from '../src/engines/engine';
import { ExtractiveEngine } from '../src/engines/extractive/engine';
import { loadQwenTokenizer, type QwenTokenizer } from '../src/engines/qwen-tokenizer';
import type { RunRequest } from '../src/agent/protocol';
import { corpusText } from './helpers';
import { testRunner, until, wireParts } from './runner-setup';

const FACTS = [
  'The vault code for the Marlowe archive is 4829137.',
  'The ferry to Carrow Island leaves from pier 17.',
  'The lighthouse keeper is named Ada Venn.',
];
const QUESTIONS = [
  'What is the vault code for the Marlowe archive?',
  'From which pier does the ferry to Carrow Island leave?',
  'Who is the lighthouse keeper?',
];
const ANSWERS = ['4829137', 'pier 17', 'Ada Venn'];

let tok: QwenTokenizer;
let book: Uint8Array<ArrayBuffer>;

beforeAll(async () => {
  tok = await loadQwenTokenizer();
  let text = corpusText('frankenstein.txt').slice(80_000, 100_000);
  for (const [i, fact] of FACTS.entries()) {
    const at = text.indexOf('. ', 4_000 + i * 5_000) + 2;
    text = `${text.slice(0, at)}${fact} ${text.slice(at)}`;
  }
  book = new TextEncoder().encode(text);
});

/**
 * An engine that writes a step's requests in one batch (the extractive engine
 * behind it), recording each batch's questions; a batch can be held until the
 * test lets it go, and a question's request can be made to fail.
 */
class BatchingEngine implements Engine {
  readonly id = 'extractive';
  readonly inner: ExtractiveEngine;
  readonly contextWindow: number;
  readonly tokenizer: QwenTokenizer;
  readonly batches: number[][] = [];
  single = 0;
  /** Holds the batch for which it returns true until `open()`. */
  holdIf: (batch: number) => boolean = () => false;
  private opened: (() => void) | undefined;
  held: Promise<void>;
  private reached!: () => void;
  failIf: (question: number, batch: number) => boolean = () => false;

  constructor(
    tokenizer: QwenTokenizer,
    private readonly limit?: number,
  ) {
    this.inner = new ExtractiveEngine(tokenizer);
    this.contextWindow = this.inner.contextWindow;
    this.tokenizer = tokenizer;
    this.held = new Promise((r) => (this.reached = r));
  }

  open(): void {
    this.opened?.();
  }

  generate(messages: readonly ChatMessage[], options: GenerateOptions): Promise<GenerateResult> {
    this.single++;
    return this.inner.generate(messages, options);
  }

  async batchLimit(_contextTokens: number): Promise<BatchLimit> {
    return { size: this.limit ?? 8, reason: 'a test engine' };
  }

  async generateBatch(requests: readonly BatchRequest[]): Promise<PromiseSettledResult<GenerateResult>[]> {
    const questions = requests.map((r) => QUESTIONS.findIndex((q) => r.messages.some((m) => m.content.includes(q))));
    this.batches.push(questions);
    const n = this.batches.length;
    if (this.holdIf(n)) {
      this.reached();
      await new Promise<void>((r) => (this.opened = r));
    }
    return Promise.all(
      requests.map(async (r, i) => {
        if (this.failIf(questions[i]!, n)) return { status: 'rejected' as const, reason: new Error('The server could not write this reply.') };
        if (r.options.signal?.aborted) return { status: 'rejected' as const, reason: Object.assign(new Error('stopped'), { name: 'AbortError' }) };
        return { status: 'fulfilled' as const, value: await this.inner.generate(r.messages, r.options) };
      }),
    );
  }
}

function request(documentId: string): Omit<RunRequest, 'question'> {
  return { documentId, engineId: 'extractive', chunkTokens: 400, memoryTokens: 128 };
}

async function setup(engine: Engine) {
  const t = await testRunner(engine, tok);
  const doc = await t.library.ingest('book.txt', book, 'extractive');
  const ended = (runId: string) =>
    until(() => t.events.some((e) => e.type === 'status' && e.runId === runId && ['done', 'failed', 'paused'].includes(e.status as string)));
  return { ...t, doc, ended };
}

const range = (n: number) => [...Array(n).keys()];
const runs0ReadId = (run: { readId?: string } | undefined) => run!.readId!;

describe('several questions read in one batch a step', () => {
  it('every step writes the three questions in one batch; the runs are linked as one read and each answers its own question', async () => {
    const engine = new BatchingEngine(tok);
    const { store, runner, doc, ended } = await setup(engine);
    const ids = await runner.startMany(request(doc.id), QUESTIONS);
    await Promise.all(ids.map(ended));
    const runs = await Promise.all(ids.map(async (id) => (await store.getRun(id))!));
    const steps = runs[0]!.chunks.length + 1;
    expect(steps).toBeGreaterThan(8);
    expect(engine.single).toBe(0);
    expect(engine.batches).toEqual(range(steps).map(() => [0, 1, 2]));
    expect(new Set(runs.map((r) => r.readId)).size).toBe(1);
    expect(runs[0]!.readId).toBeTruthy();
    runs.forEach((run, i) => {
      expect(run.status).toBe('done');
      expect(run.answer).toContain(ANSWERS[i]);
    });
    for (const id of ids) expect((await store.listRevisions(id)).map((r) => r.index)).toEqual(range(steps - 1));
  });

  it('more questions than a batch holds are written in groups, a group a batch', async () => {
    const engine = new BatchingEngine(tok, 2);
    const { store, runner, doc, ended } = await setup(engine);
    const ids = await runner.startMany(request(doc.id), QUESTIONS);
    await Promise.all(ids.map(ended));
    expect(Math.max(...engine.batches.map((b) => b.length))).toBe(2);
    const steps = (await store.getRun(ids[0]!))!.chunks.length + 1;
    expect(engine.batches.flat().length).toBe(3 * steps);
    for (const [i, id] of ids.entries()) expect((await store.getRun(id))!.answer).toContain(ANSWERS[i]);
  });

  it('a read of longer steps that joins a batch keeps it to its own size: the size is worked out at each read’s own context', async () => {
    const engine = new BatchingEngine(tok);
    const asked: number[] = [];
    // Four questions' steps fit at the short context, two at the long one.
    engine.batchLimit = async (contextTokens: number) => (asked.push(contextTokens), { size: contextTokens > 1000 ? 2 : 4, reason: 'a test engine' });
    engine.holdIf = (batch) => batch === 1;
    // The size of each batch that holds a step of the long read (a chunk of 1600 tokens, several thousand characters).
    const withLong: number[] = [];
    const own = engine.generateBatch.bind(engine);
    engine.generateBatch = (requests) => {
      if (requests.some((r) => r.messages.some((m) => m.content.length > 4000))) withLong.push(requests.length);
      return own(requests);
    };
    const { runner, doc, ended } = await setup(engine);
    const short = await runner.startMany(request(doc.id), QUESTIONS);
    await engine.held;
    expect(engine.batches[0]).toHaveLength(3);
    const long = await runner.startMany({ ...request(doc.id), chunkTokens: 1600 }, QUESTIONS);
    engine.open();
    await Promise.all([...short, ...long].map(ended));
    expect(new Set(asked).size).toBe(2);
    expect(withLong.length).toBeGreaterThan(3);
    expect(Math.max(...withLong)).toBe(2);
  });

  it('a question whose reply fails fails alone; the others read on to their answers', async () => {
    const engine = new BatchingEngine(tok);
    engine.failIf = (question, batch) => question === 1 && batch === 4;
    const { store, runner, doc, ended } = await setup(engine);
    const ids = await runner.startMany(request(doc.id), QUESTIONS);
    await Promise.all(ids.map(ended));
    const [a, b, c] = await Promise.all(ids.map(async (id) => (await store.getRun(id))!));
    expect(b).toMatchObject({ status: 'failed', nextChunk: 3 });
    expect(b!.error).toContain('could not write this reply');
    expect(a).toMatchObject({ status: 'done' });
    expect(c).toMatchObject({ status: 'done' });
    // After the failure the batches hold the two questions still reading.
    expect(engine.batches.slice(4).every((q) => q.join() === '0,2')).toBe(true);
  });

  it('a read paused midway resumes every question where it stopped, still in one batch a step, each chunk stored once', async () => {
    const engine = new BatchingEngine(tok);
    engine.holdIf = (batch) => batch === 4;
    const { store, runner, doc, ended } = await setup(engine);
    const ids = await runner.startMany(request(doc.id), QUESTIONS);
    await engine.held;
    for (const id of ids) await runner.jobs.pause(id);
    engine.open();
    await Promise.all(ids.map(ended));
    for (const id of ids) expect(await store.getRun(id)).toMatchObject({ status: 'paused', nextChunk: 3 });
    const before = engine.batches.length;
    await runner.resumeRead(runs0ReadId(await store.getRun(ids[0]!)));
    await until(async () => (await Promise.all(ids.map((id) => store.getRun(id)))).every((r) => r!.status === 'done'));
    const runs = await Promise.all(ids.map(async (id) => (await store.getRun(id))!));
    const steps = runs[0]!.chunks.length + 1;
    expect(engine.batches.slice(before)).toEqual(range(steps - 3).map(() => [0, 1, 2]));
    for (const [i, run] of runs.entries()) {
      expect(run.answer).toContain(ANSWERS[i]);
      expect((await store.listRevisions(run.id)).map((r) => r.index)).toEqual(range(steps - 1));
    }
  });

  it('a read is paused, cancelled and deleted as one: every question of it', async () => {
    const engine = new BatchingEngine(tok);
    engine.holdIf = (batch) => batch === 4;
    const { store, runner, doc, ended } = await setup(engine);
    const ids = await runner.startMany(request(doc.id), QUESTIONS);
    await engine.held;
    const readId = runs0ReadId(await store.getRun(ids[0]!));
    await expect(runner.deleteRead(readId)).rejects.toThrow(/still reading: pause or cancel the read, then delete it/);
    await runner.pauseRead(readId);
    engine.open();
    await Promise.all(ids.map(ended));
    for (const id of ids) expect(await store.getRun(id)).toMatchObject({ status: 'paused', nextChunk: 3 });
    await runner.cancelRead(readId);
    for (const id of ids) expect(await store.getRun(id)).toMatchObject({ status: 'cancelled' });
    await runner.deleteRead(readId);
    expect(await store.listRuns()).toEqual([]);
  });

  it('a question of a paused read that cannot resume gives its place up: the others resume and read to their answers', async () => {
    const engine = new BatchingEngine(tok);
    engine.holdIf = (batch) => batch === 2;
    const { store, runner, doc, ended } = await setup(engine);
    const ids = await runner.startMany(request(doc.id), QUESTIONS);
    await engine.held;
    for (const id of ids) await runner.jobs.pause(id);
    engine.open();
    await Promise.all(ids.map(ended));
    // The first the read resumes cannot be marked running: before, the others were never begun.
    const stuck = (await store.listRuns()).find((r) => ids.includes(r.id))!.id;
    const own = store.setRunStatus.bind(store);
    store.setRunStatus = async (id, status, error) => {
      if (id === stuck && status === 'running') throw new Error('The disk is full.');
      return own(id, status, error);
    };
    await expect(runner.resumeRead(runs0ReadId(await store.getRun(ids[0]!)))).rejects.toThrow('The disk is full.');
    const others = ids.filter((id) => id !== stuck);
    await until(async () => (await Promise.all(others.map((id) => store.getRun(id)))).every((r) => r!.status === 'done'));
    for (const id of others) expect(await store.getRun(id)).toMatchObject({ status: 'done' });
    expect(await store.getRun(stuck)).toMatchObject({ status: 'paused' });
  });

  it('a reload mid-read resumes every question of the read from its stored step, in one batch a step', async () => {
    const engine = new BatchingEngine(tok);
    engine.holdIf = (batch) => batch === 4; // the tab is gone while its fourth step is written: never let go
    const { store, runner, doc } = await setup(engine);
    const ids = await runner.startMany(request(doc.id), QUESTIONS);
    await engine.held;
    // The next page's worker, over the same storage: it finds the read's runs still reading.
    const after = new BatchingEngine(tok);
    const events: { type: string; runId?: string; status?: string }[] = [];
    const next = wireParts({ store, createEngine: async () => after, tokenizerFor: async () => tok, publish: (e) => events.push(e) });
    await next.runner.resumeReading();
    await until(() => ids.every((id) => events.some((e) => e.type === 'status' && e.runId === id && e.status === 'done')));
    const runs = await Promise.all(ids.map(async (id) => (await store.getRun(id))!));
    const steps = runs[0]!.chunks.length + 1;
    expect(after.batches).toEqual(range(steps - 3).map(() => [0, 1, 2]));
    for (const [i, run] of runs.entries()) {
      expect(run.answer).toContain(ANSWERS[i]);
      expect((await store.listRevisions(run.id)).map((r) => r.index)).toEqual(range(steps - 1));
    }
  });
});
