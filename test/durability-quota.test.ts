import 'fake-indexeddb/auto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_TEMPLATES, INITIAL_MEMORY } from '../src/core/prompts';
import { type RevisionRecord, type RunRecord, StorageFullError, Store } from '../src/storage/db';
import { bookBytes, freshDbName, memories, openTab, range, request, type Tab } from './durability-setup';
import { QuotaFault } from './storage-faults';

let fault: QuotaFault;
beforeAll(async () => {
  fault = await QuotaFault.install();
});
afterAll(() => fault.uninstall());

const FULL = /storage for this site is full, so .* could not be saved\. Free space: delete runs or books/;

function runRecord(id: string): RunRecord {
  return {
    id,
    documentId: 'doc',
    documentName: 'doc.txt',
    question: 'Q?',
    engineId: 'extractive',
    settings: { requestedChunkTokens: 500, chunkTokens: 500, memoryTokens: 64, contextTokens: 1000, temperature: 0.7, topP: 0.95 },
    templates: { ...DEFAULT_TEMPLATES },
    chunks: range(3).map((i) => ({ start: i * 10, end: i * 10 + 10, tokens: 3 })),
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
    wordsRemoved: 0,
    start: index * 10,
    end: index * 10 + 10,
    chunkTokens: 3,
    promptTokens: 40,
    completionTokens: 2,
    ms: 1,
    finishReason: 'stop',
    retries: 0,
    committedAt: 2 + index,
  };
}

/** A run read straight through with room to spare: what every interrupted run must end up equal to. */
async function reference(): Promise<{ run: RunRecord; memories: string[] }> {
  const tab = await openTab(freshDbName('quota-ref'));
  const doc = await tab.library.ingest('book.txt', bookBytes(), 'extractive');
  const runId = await tab.runner.start(request(doc.id));
  await tab.log.status(runId, 'done');
  const result = { run: (await tab.store.getRun(runId))!, memories: await memories(tab.store, runId) };
  tab.store.close();
  return result;
}

/** A tab with the book stored and a run started; `onRevision` sees each committed index. */
async function startRun(prefix: string, onRevision: (index: number) => void): Promise<{ tab: Tab; runId: string; dbName: string }> {
  const dbName = freshDbName(prefix);
  const tab = await openTab(dbName);
  tab.log.onEvent = (e) => {
    if (e.type === 'revision') onRevision(e.index);
  };
  const doc = await tab.library.ingest('book.txt', bookBytes(), 'extractive');
  const runId = await tab.runner.start(request(doc.id));
  return { tab, runId, dbName };
}

describe('a full disk', () => {
  it('rolls a revision that does not fit back whole and says what to do', async () => {
    const store = await Store.open(freshDbName('quota-store'));
    await store.createRun(runRecord('r'));
    await store.commitRevision(revision('r', 0), 'memory 0');

    fault.fill({ stores: ['memories'] }); // the revision is written, then its memory is refused
    const failed = store.commitRevision(revision('r', 1), 'memory 1');
    await expect(failed).rejects.toThrow(StorageFullError);
    await expect(failed).rejects.toThrow(/so revision 2 could not be saved/);
    expect(fault.refusals).toBeGreaterThan(0);
    fault.free();

    expect((await store.listRevisions('r')).map((r) => r.index)).toEqual([0]);
    expect(await store.listMemories('r')).toEqual(['memory 0']);
    expect(await store.getRun('r')).toMatchObject({ nextChunk: 1, memory: 'memory 0', status: 'running' });
    // With room again the same revision goes in.
    await store.commitRevision(revision('r', 1), 'memory 1');
    expect(await store.getRun('r')).toMatchObject({ nextChunk: 2, memory: 'memory 1' });
    store.close();
  });

  it('pauses the run with an alert, keeps every stored revision, and resumes once there is room', async () => {
    const ref = await reference();
    const n = ref.run.chunks.length;
    const k = 3;
    const { tab, runId } = await startRun('quota-pause', (index) => {
      if (index === k - 1) fault.fill({ stores: ['revisions', 'memories'] }); // revision k finds the disk full
    });
    const paused = await tab.log.status(runId, 'paused');
    fault.free();
    expect(paused).toMatchObject({ error: expect.stringMatching(FULL) });
    expect((paused as { error: string }).error).toMatch(/revision 4 could not be saved.*Then press Resume: everything read so far is kept\./);

    const run = (await tab.store.getRun(runId))!;
    expect(run).toMatchObject({ status: 'paused', nextChunk: k, error: (paused as { error: string }).error });
    expect((await tab.store.listRevisions(runId)).map((r) => r.index)).toEqual(range(k));
    expect(await memories(tab.store, runId)).toEqual(ref.memories.slice(0, k));
    expect(run.memory).toBe(ref.memories[k - 1]);

    await tab.runner.jobs.resume(runId);
    await tab.log.status(runId, 'done');
    const done = (await tab.store.getRun(runId))!;
    expect(done).toMatchObject({ status: 'done', nextChunk: n, answer: ref.run.answer });
    expect(done.error).toBeUndefined();
    expect((await tab.store.listRevisions(runId)).map((r) => r.index)).toEqual(range(n));
    expect(await memories(tab.store, runId)).toEqual(ref.memories);
    expect(tab.log.revisions(runId)).toEqual(range(n));
    tab.store.close();
  });

  it('still tells every tab when even the pause cannot be written, and a reload picks the run up', async () => {
    const ref = await reference();
    const n = ref.run.chunks.length;
    const k = 2;
    const { tab, runId, dbName } = await startRun('quota-nothing', (index) => {
      if (index === k - 1) fault.fill(); // nothing at all can be written any more
    });
    const paused = await tab.log.status(runId, 'paused');
    expect(paused).toMatchObject({ error: expect.stringMatching(FULL) });
    // Storage still says running (the status did not fit), at the last revision that did.
    expect(await tab.store.getRun(runId)).toMatchObject({ status: 'running', nextChunk: k, memory: ref.memories[k - 1] });
    expect((await tab.store.listRevisions(runId)).map((r) => r.index)).toEqual(range(k));
    fault.free();
    tab.store.close();

    // The page is reloaded after space was freed: the run is resumed from where storage has it.
    const reloaded = await openTab(dbName);
    await reloaded.runner.jobs.resume(runId);
    await reloaded.log.status(runId, 'done');
    expect(await reloaded.store.getRun(runId)).toMatchObject({ status: 'done', nextChunk: n, answer: ref.run.answer });
    expect((await reloaded.store.listRevisions(runId)).map((r) => r.index)).toEqual(range(n));
    expect(await memories(reloaded.store, runId)).toEqual(ref.memories);
    reloaded.store.close();
  });

  it('pauses when the final answer does not fit, and the resume writes only the answer', async () => {
    const ref = await reference();
    const n = ref.run.chunks.length;
    const { tab, runId } = await startRun('quota-answer', (index) => {
      if (index === n - 1) fault.fill({ stores: ['runs'] });
    });
    await tab.log.status(runId, 'paused');
    fault.free();
    const run = (await tab.store.getRun(runId))!;
    expect(run).toMatchObject({ nextChunk: n });
    expect(run.answer).toBeUndefined();

    const before = tab.engine.calls;
    await tab.runner.jobs.resume(runId);
    await tab.log.status(runId, 'done');
    expect(tab.engine.calls - before).toBe(1); // the answer step, no chunk read again
    expect(await tab.store.getRun(runId)).toMatchObject({ status: 'done', answer: ref.run.answer });
    expect((await tab.store.listRevisions(runId)).map((r) => r.index)).toEqual(range(n));
    tab.store.close();
  });

  it('refuses a run that does not fit at the start and stores nothing of it', async () => {
    const tab = await openTab(freshDbName('quota-start'));
    const doc = await tab.library.ingest('book.txt', bookBytes(), 'extractive');
    fault.fill();
    await expect(tab.runner.start(request(doc.id))).rejects.toThrow(StorageFullError);
    fault.free();
    expect(await tab.store.listRuns()).toEqual([]);
    expect(tab.log.events).toEqual([]);
    expect(await tab.store.getDocument(doc.id)).toBeDefined();
    tab.store.close();
  });
});
