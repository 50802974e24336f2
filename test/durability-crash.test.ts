import 'fake-indexeddb/auto';
import { describe, expect, it, vi } from 'vitest';
import { INITIAL_MEMORY } from '../src/core/prompts';
import type { RunRecord } from '../src/storage/db';
import { bookBytes, FakeLocks, freshDbName, killTab, memories, openTab, qwen, range, request, type Tab } from './durability-setup';
import { GatedEngine } from './gated-engine';
import { until } from './helpers';

/** A run read straight through: what every interrupted run must end up equal to. */
async function reference(): Promise<{ run: RunRecord; memories: string[] }> {
  const tab = await openTab(freshDbName('crash-ref'));
  const doc = await tab.library.ingest('book.txt', bookBytes(), 'extractive');
  const runId = await tab.runner.start(request(doc.id));
  await tab.log.status(runId, 'done');
  const result = { run: (await tab.store.getRun(runId))!, memories: await memories(tab.store, runId) };
  tab.store.close();
  return result;
}

const indexes = async (tab: Tab, runId: string) => (await tab.store.listRevisions(runId)).map((r) => r.index);

describe('a tab that dies in the middle of a run', () => {
  it('leaves revisions 0..k-1 once each, and the next tab continues from the last stored memory — at every step, the answer included', async () => {
    const ref = await reference();
    const n = ref.run.chunks.length;
    // Every chunk step, then the final answer (call n).
    for (const k of range(n + 1)) {
      const dbName = freshDbName('crash');
      const first = await openTab(dbName, { dieAt: k });
      const doc = await first.library.ingest('book.txt', bookBytes(), 'extractive');
      const runId = await first.runner.start(request(doc.id));
      await first.engine.dead;
      killTab(first);

      const second = await openTab(dbName);
      const stored = (await second.store.getRun(runId))!;
      expect(stored).toMatchObject({ status: 'running', nextChunk: k });
      expect(stored.answer).toBeUndefined();
      expect(await indexes(second, runId)).toEqual(range(k));
      expect(stored.memory).toBe(k === 0 ? INITIAL_MEMORY : ref.memories[k - 1]);

      const commit = vi.spyOn(second.store, 'commitRevision');
      await second.runner.jobs.resume(runId);
      await second.log.status(runId, 'done');
      // The next tab read only what was left: chunks k..n-1, then the answer.
      expect(commit.mock.calls.map(([r]) => r.index)).toEqual(range(n).slice(k));
      expect(second.engine.calls).toBe(n - k + 1);
      expect(await indexes(second, runId)).toEqual(range(n));
      expect(await memories(second.store, runId)).toEqual(ref.memories);
      expect(await second.store.getRun(runId)).toMatchObject({ status: 'done', answer: ref.run.answer });
      second.store.close();
    }
  });
});

describe('two tabs on one run', () => {
  it('has one writer; the other follows its events and takes over when it dies', async () => {
    const ref = await reference();
    const n = ref.run.chunks.length;
    const k = 4;
    const dbName = freshDbName('tabs');
    const locks = new FakeLocks();
    const channel: Tab[] = [];
    const a = await openTab(dbName, { name: 'a', dieAt: k, locks, channel });
    const b = await openTab(dbName, { name: 'b', locks, channel });
    const commitsA = vi.spyOn(a.store, 'commitRevision');
    const commitsB = vi.spyOn(b.store, 'commitRevision');

    const doc = await a.library.ingest('book.txt', bookBytes(), 'extractive');
    const runId = await a.runner.start(request(doc.id));
    await a.engine.dead;
    const lock = `memagent-run-${runId}`;
    // A writes; B heard the run start and waits for its lock.
    expect(locks.holder(lock)).toBe('a');
    expect(locks.waiting(lock)).toEqual(['b']);
    expect(commitsA.mock.calls.map(([r]) => r.index)).toEqual(range(k));
    expect(commitsB).not.toHaveBeenCalled();
    expect(b.engine.calls).toBe(0);

    killTab(a, locks, channel);
    await b.log.status(runId, 'done');
    expect(commitsB.mock.calls.map(([r]) => r.index)).toEqual(range(n).slice(k));
    expect(await indexes(b, runId)).toEqual(range(n));
    expect(await memories(b.store, runId)).toEqual(ref.memories);
    expect(await b.store.getRun(runId)).toMatchObject({ status: 'done', answer: ref.run.answer });
    b.store.close();
  });

  it('a pause in one tab stops the reader in the other, and neither reads on', async () => {
    const dbName = freshDbName('tabs-pause');
    const locks = new FakeLocks();
    const channel: Tab[] = [];
    // Tab a's third step waits until the test lets it go: the pause comes while a reads it.
    const gated = new GatedEngine(await qwen());
    gated.holdAt = 2;
    const a = await openTab(dbName, { name: 'a', locks, channel, deps: { createEngine: async () => gated } });
    const b = await openTab(dbName, { name: 'b', locks, channel });
    const doc = await a.library.ingest('book.txt', bookBytes(), 'extractive');
    const runId = await a.runner.start(request(doc.id));
    await gated.held;
    await b.runner.jobs.pause(runId);
    await b.log.status(runId, 'paused');
    // Tab a hears the pause from the channel; only then does its step go on, and it is dropped.
    await new Promise((resolve) => gated.heldSignal!.addEventListener('abort', resolve));
    gated.open();
    expect(await gated.settled).toMatchObject({ name: 'AbortError' });
    await a.runner.jobs.settled(runId);
    const run = (await a.store.getRun(runId))!;
    expect(run).toMatchObject({ status: 'paused', nextChunk: 2 });
    expect(run.chunks.length).toBeGreaterThan(3);
    expect(await indexes(a, runId)).toEqual([0, 1]);
    // Nobody holds the run's lock: no reader in either tab goes on.
    await until(() => locks.holder(`memagent-run-${runId}`) === undefined);
    expect(locks.holder(`memagent-run-${runId}`)).toBeUndefined();
    expect(locks.waiting(`memagent-run-${runId}`)).toEqual([]);
    a.store.close();
    b.store.close();
  });
});

describe('Pause, Cancel and Delete', () => {
  it('hold across a reload; a cancelled run keeps its revisions and resumes to the same answer', async () => {
    const ref = await reference();
    const n = ref.run.chunks.length;
    const dbName = freshDbName('cancel');
    const tab = await openTab(dbName);
    const doc = await tab.library.ingest('book.txt', bookBytes(), 'extractive');
    let runId = '';
    let cancelled: Promise<void> | undefined;
    tab.log.onEvent = (e) => {
      if (e.type === 'revision' && e.index === 2) cancelled ??= tab.runner.jobs.cancel(runId);
    };
    runId = await tab.runner.start(request(doc.id));
    await tab.log.status(runId, 'cancelled');
    await cancelled;
    tab.store.close();

    const reloaded = await openTab(dbName);
    const run = (await reloaded.store.getRun(runId))!;
    expect(run.status).toBe('cancelled');
    expect(await indexes(reloaded, runId)).toEqual(range(run.nextChunk));
    expect(run.nextChunk).toBeGreaterThanOrEqual(3);
    await reloaded.runner.jobs.resume(runId);
    await reloaded.log.status(runId, 'done');
    expect(await indexes(reloaded, runId)).toEqual(range(n));
    expect(await reloaded.store.getRun(runId)).toMatchObject({ status: 'done', answer: ref.run.answer });
    reloaded.store.close();
  });

  it('Delete removes the run, its revisions and memories, and nothing else', async () => {
    const tab = await openTab(freshDbName('delete'));
    const doc = await tab.library.ingest('book.txt', bookBytes(), 'extractive');
    const keep = await tab.runner.start(request(doc.id));
    await tab.log.status(keep, 'done');
    let gone = '';
    let cancelled: Promise<void> | undefined;
    tab.log.onEvent = (e) => {
      if (e.type === 'revision' && e.runId === gone && e.index === 1) cancelled ??= tab.runner.jobs.cancel(gone);
    };
    gone = await tab.runner.start(request(doc.id, { question: 'Who made the creature?' }));
    await tab.log.status(gone, 'cancelled');
    await cancelled;
    const kept = { revisions: await indexes(tab, keep), memories: await memories(tab.store, keep), run: await tab.store.getRun(keep) };

    await tab.runner.deleteRun(gone);
    expect(await tab.store.getRun(gone)).toBeUndefined();
    expect(await tab.store.listRevisions(gone)).toEqual([]);
    expect(await memories(tab.store, gone)).toEqual([]);
    expect(await indexes(tab, keep)).toEqual(kept.revisions);
    expect(await memories(tab.store, keep)).toEqual(kept.memories);
    expect(await tab.store.getRun(keep)).toEqual(kept.run);
    expect(await tab.store.getDocument(doc.id)).toBeDefined();
    expect(tab.log.events.at(-1)).toMatchObject({ type: 'status', runId: gone });
    tab.store.close();
  });
});
