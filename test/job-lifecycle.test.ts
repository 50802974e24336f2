import 'fake-indexeddb/auto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChatMessage, GenerateOptions, GenerateResult } from '../src/core/generation';
import type { Engine } from '../src/engines/engine';
import { DeviceLostError } from '../src/engines/errors';
import { ExtractiveEngine } from '../src/engines/extractive/engine';
import { EngineCache } from '../src/jobs/engines';
import type { JobHost } from '../src/jobs/host';
import { Evaluator } from '../src/runs/evaluator';
import { Store } from '../src/storage/db';
import type { JobStatus } from '../src/storage/schema';
import { bookBytes, FakeLocks, freshDbName, qwen, range, request } from './durability-setup';
import { wireParts } from './runner-setup';
import { QuotaFault } from './storage-faults';

/*
 * Runs and evaluation sweeps are jobs of one host: the same faults must end
 * the same way for both. Each case below runs once per kind of job.
 */

/** What every tab hears, for either kind: the job's id, and its status with the reason. */
interface Heard {
  id: string;
  type: string;
  status?: JobStatus;
  error?: string;
}

/** The extractive engine, except where told: a call that never returns (the tab is gone) or a lost GPU. */
class FaultyEngine implements Engine {
  readonly id = 'extractive';
  readonly inner: ExtractiveEngine;
  readonly contextWindow: number;
  calls = 0;
  recovered: number[] = [];
  /** Calls from this one on lose the GPU. */
  loseFrom = Infinity;
  /** Calls lost so far, and how many to lose in all. */
  lost = 0;
  loseCount = 0;
  private reached: () => void = () => undefined;
  readonly dead = new Promise<void>((resolve) => (this.reached = resolve));

  constructor(
    readonly tokenizer: ExtractiveEngine['tokenizer'],
    private readonly dieAt = -1,
  ) {
    this.inner = new ExtractiveEngine(tokenizer);
    this.contextWindow = this.inner.contextWindow;
  }

  async recover(attempt: number): Promise<void> {
    this.recovered.push(attempt);
  }

  generate(messages: readonly ChatMessage[], options: GenerateOptions): Promise<GenerateResult> {
    const n = this.calls++;
    if (n === this.dieAt) {
      this.reached();
      return new Promise(() => undefined);
    }
    if (n >= this.loseFrom && this.lost < this.loseCount) {
      this.lost++;
      return Promise.reject(new DeviceLostError('The GPU stopped responding (device lost).', { cause: new Error('GPUDevice.lost') }));
    }
    return this.inner.generate(messages, options);
  }
}

/** One tab of one kind of job: its store, its host, and what it heard. */
interface JobTab {
  name: string;
  store: Store;
  jobs: JobHost;
  heard: Heard[];
  /** Starts a job here; returns its id once stored. */
  start(): Promise<string>;
  /** Steps stored so far (revisions, samples), by index. */
  steps(id: string): Promise<number[]>;
  /** Steps the job has in all. */
  total(id: string): Promise<number>;
  hear(event: unknown): void;
}

interface Kind {
  noun: string;
  /** The object store a step is written to (where a full disk refuses it). */
  stepStore: string;
  open(dbName: string, name: string, engine: Engine, others: JobTab[], locks?: FakeLocks): Promise<JobTab>;
}

/** A BroadcastChannel reaches every other tab, not the sender, a task later. */
function broadcaster(name: string, others: JobTab[], heard: Heard[]) {
  return (event: { type: string; status?: JobStatus; error?: string; runId?: string; evaluationId?: string }) => {
    heard.push({
      id: event.runId ?? event.evaluationId ?? '',
      type: event.type,
      ...(event.status && { status: event.status }),
      ...(event.error && { error: event.error }),
    });
    for (const other of others) if (other.name !== name) setTimeout(() => other.hear(event), 0);
  };
}

const RUN: Kind = {
  noun: 'run',
  stepStore: 'revisions',
  async open(dbName, name, engine, others, locks) {
    const store = await Store.open(dbName);
    const heard: Heard[] = [];
    const { library, runner } = wireParts({
      store,
      createEngine: async () => engine,
      tokenizerFor: qwen,
      publish: broadcaster(name, others, heard),
      ...(locks && { withLock: locks.forTab(name), tryLock: locks.tryForTab(name) }),
    });
    const tab: JobTab = {
      name,
      store,
      jobs: runner.jobs,
      heard,
      start: async () => runner.start(request((await library.ingest('book.txt', bookBytes(), 'extractive')).id)),
      steps: async (id) => (await store.listRevisionsFrom(id, 0)).map((r) => r.index),
      total: async (id) => (await store.getRun(id))!.chunks.length,
      hear: (event) => runner.handleControl(event as never),
    };
    others.push(tab);
    return tab;
  },
};

const SWEEP: Kind = {
  noun: 'evaluation',
  stepStore: 'evaluationSamples',
  async open(dbName, name, engine, others, locks) {
    const store = await Store.open(dbName);
    const heard: Heard[] = [];
    const evaluator = new Evaluator({
      store,
      engines: new EngineCache(async () => engine),
      publish: broadcaster(name, others, heard),
      stepIntervalMs: 0,
      ...(locks && { withLock: locks.forTab(name) }),
    });
    const tab: JobTab = {
      name,
      store,
      jobs: evaluator.jobs,
      heard,
      start: () => evaluator.start({ engineId: 'extractive', tasks: ['niah_single_1', 'vt'], lengths: [8 * 1024], samples: 2, mode: 'memory' }),
      steps: (id) => store.listEvaluationOrdinals(id),
      total: async (id) => (await store.getEvaluation(id))!.total,
      hear: (event) => evaluator.handleControl(event as never),
    };
    others.push(tab);
    return tab;
  },
};

/** Resolves with the first status event `tab` published for job `id` that matches. */
async function statusHeard(tab: JobTab, id: string, status: JobStatus): Promise<Heard> {
  for (let i = 0; i < 6000; i++) {
    const seen = tab.heard.find((h) => h.id === id && h.type === 'status' && h.status === status);
    if (seen) return seen;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`${tab.name} never said ${status}`);
}

let fault: QuotaFault;
beforeAll(async () => {
  fault = await QuotaFault.install();
});
afterAll(() => fault.uninstall());

describe.each([
  ['a run', RUN],
  ['an evaluation sweep', SWEEP],
])('%s, as a job of the host', (_, kind) => {
  it('a second tab stands by for the lock and carries on from the next step when the writing tab closes', async () => {
    const tok = await qwen();
    const dbName = freshDbName(`handover-${kind.noun}`);
    const locks = new FakeLocks();
    const tabs: JobTab[] = [];
    const dying = new FaultyEngine(tok, 4); // the fifth request never returns: the tab is gone mid-step
    const first = await kind.open(dbName, 'first', dying, tabs, locks);
    const second = await kind.open(dbName, 'second', new FaultyEngine(tok), tabs, locks);
    const id = await first.start();
    await dying.dead;
    const before = await first.steps(id);
    expect(before.length).toBeGreaterThan(0);
    // The second tab heard that the job runs, and waits for its lock.
    const lock = [...new Set(locks.waiting(`memagent-${kind.noun}-${id}`))];
    expect(lock).toEqual(['second']);

    locks.kill('first');
    tabs.splice(tabs.indexOf(first), 1);
    await statusHeard(second, id, 'done');
    const total = await second.total(id);
    expect(await second.steps(id)).toEqual(range(total));
    expect((await second.store.getRun(id)) ?? (await second.store.getEvaluation(id))).toMatchObject({ status: 'done' });
    first.store.close();
    second.store.close();
  });

  it('a full disk pauses it with the reason, keeps every stored step, and Resume finishes it', async () => {
    const tok = await qwen();
    const tabs: JobTab[] = [];
    const tab = await kind.open(freshDbName(`full-${kind.noun}`), 'tab', new FaultyEngine(tok), tabs);
    fault.fill({ stores: [kind.stepStore], allowed: 2 });
    let id: string;
    try {
      id = await tab.start();
      const paused = await statusHeard(tab, id, 'paused');
      expect(paused.error).toMatch(/storage for this site is full, so .* could not be saved\..* Then press Resume: everything read so far is kept\.$/);
      await tab.jobs.settled(id);
      expect(await tab.steps(id)).toEqual([0, 1]);
      expect((await tab.store.getRun(id)) ?? (await tab.store.getEvaluation(id))).toMatchObject({ status: 'paused' });
    } finally {
      fault.free();
    }
    await tab.jobs.resume(id);
    await statusHeard(tab, id, 'done');
    expect(await tab.steps(id)).toEqual(range(await tab.total(id)));
    tab.store.close();
  });

  it('a lost GPU is reloaded and the job reads on; lost four times in a row, it is paused with the reason', async () => {
    const tok = await qwen();
    const tabs: JobTab[] = [];
    const engine = new FaultyEngine(tok);
    engine.loseFrom = 2;
    engine.loseCount = 2;
    const tab = await kind.open(freshDbName(`lost-${kind.noun}`), 'tab', engine, tabs);
    const id = await tab.start();
    await statusHeard(tab, id, 'done');
    expect(engine.recovered).toEqual([1, 2]);
    expect(await tab.steps(id)).toEqual(range(await tab.total(id)));

    const always = new FaultyEngine(tok);
    always.loseFrom = 1;
    always.loseCount = Infinity;
    const other = await kind.open(freshDbName(`lost-${kind.noun}`), 'other', always, []);
    const stuck = await other.start();
    const paused = await statusHeard(other, stuck, 'paused');
    expect(paused.error).toBe(
      `The GPU stopped responding (device lost). The GPU was lost 4 times in a row, so the ${kind.noun} is paused; press Resume to try again.`,
    );
    expect(always.recovered).toEqual([1, 2, 3]);
    expect((await other.store.getRun(stuck)) ?? (await other.store.getEvaluation(stuck))).toMatchObject({ status: 'paused' });
    tab.store.close();
    other.store.close();
  });
});
