import 'fake-indexeddb/auto';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { DB_VERSION, type RunRecord, Store } from '../src/storage/db';
import { freshDbName, openTab, range } from './durability-setup';

/**
 * Databases written by version 1 of the schema, dumped store by store:
 * memagent-db-v1.json by the code of that version (documents, texts, runs,
 * revisions, memories), memagent-db-v1-earliest.json by the first release, which
 * kept each memory inside its revision. Each holds a document, a finished run
 * and a run paused part-way.
 */
interface Dump {
  version: number;
  stores: Record<string, { keyPath: string | string[]; indexes: { name: string; keyPath: string }[]; records: Record<string, unknown>[] }>;
}

function fixture(name: string): Dump {
  return JSON.parse(readFileSync(new URL(`fixtures/${name}`, import.meta.url), 'utf8')) as Dump;
}

/** Writes a dump with raw IndexedDB calls, exactly as the old version laid it out. */
async function restore(dbName: string, dump: Dump): Promise<void> {
  const db = await new Promise<IDBDatabase>((resolve, reject) => {
    const open = indexedDB.open(dbName, dump.version);
    open.onupgradeneeded = () => {
      for (const [name, store] of Object.entries(dump.stores)) {
        const os = open.result.createObjectStore(name, { keyPath: store.keyPath });
        for (const index of store.indexes) os.createIndex(index.name, index.keyPath);
      }
    };
    open.onsuccess = () => resolve(open.result);
    open.onerror = () => reject(open.error);
  });
  const names = Object.keys(dump.stores);
  const tx = db.transaction(names, 'readwrite');
  for (const name of names) for (const record of dump.stores[name]!.records) tx.objectStore(name).add(record);
  await new Promise<void>((resolve, reject) => {
    tx.oncomplete = () => resolve();
    tx.onerror = () => reject(tx.error);
  });
  db.close();
}

async function rawInfo(dbName: string): Promise<{ version: number; stores: string[] }> {
  const db = await new Promise<IDBDatabase>((resolve) => {
    const open = indexedDB.open(dbName);
    open.onsuccess = () => resolve(open.result);
  });
  const info = { version: db.version, stores: [...db.objectStoreNames] };
  db.close();
  return info;
}

const records = <T>(dump: Dump, store: string) => dump.stores[store]!.records as T[];

describe('a version 1 database', () => {
  for (const file of ['memagent-db-v1.json', 'memagent-db-v1-earliest.json']) {
    it(`opens with the current schema without losing anything (${file})`, async () => {
      const dump = fixture(file);
      expect(dump.version).toBe(1);
      const dbName = freshDbName('v1');
      await restore(dbName, dump);

      const store = await Store.open(dbName);
      const info = await rawInfo(dbName);
      expect(info.version).toBe(DB_VERSION);
      expect(info.stores).toEqual(expect.arrayContaining(['documents', 'texts', 'runs', 'revisions', 'memories']));
      expect(await store.listEvaluations()).toEqual([]);

      // Documents, texts and runs come through unchanged.
      for (const doc of records<{ id: string }>(dump, 'documents')) expect(await store.getDocument(doc.id)).toEqual(doc);
      for (const text of records<{ id: string; text: string }>(dump, 'texts')) expect(await store.getText(text.id)).toBe(text.text);
      const runs = records<RunRecord>(dump, 'runs');
      expect((await store.listRuns()).map((r) => r.id).sort()).toEqual(runs.map((r) => r.id).sort());
      for (const run of runs) expect(await store.getRun(run.id)).toEqual(run);

      // Every revision and every memory, in order, wherever version 1 kept it.
      const oldRevisions = records<{ runId: string; index: number; memory?: string }>(dump, 'revisions');
      const oldMemories = dump.stores.memories ? records<{ runId: string; index: number; memory: string }>(dump, 'memories') : oldRevisions;
      for (const run of runs) {
        const revisions = await store.listRevisions(run.id);
        const mine = oldRevisions.filter((r) => r.runId === run.id);
        expect(revisions.map((r) => r.index)).toEqual(range(run.nextChunk));
        expect(revisions).toEqual(
          mine.map(({ memory: _memory, ...r }) => (dump.stores.memories ? r : { ...r, wordsAdded: 0, wordsRemoved: 0, retries: 0 })),
        );
        expect(await store.listMemories(run.id)).toEqual(oldMemories.filter((m) => m.runId === run.id).map((m) => m.memory));
        expect(run.memory).toBe(await store.getMemory(run.id, run.nextChunk - 1));
      }
      store.close();
    });

    it(`resumes its paused run to the end with the current runner (${file})`, async () => {
      const dump = fixture(file);
      const dbName = freshDbName('v1-resume');
      await restore(dbName, dump);
      const runs = records<RunRecord>(dump, 'runs');
      const paused = runs.find((r) => r.status === 'paused')!;
      const done = runs.find((r) => r.status === 'done')!;
      const k = paused.nextChunk;
      expect(k).toBeGreaterThan(0);
      expect(k).toBeLessThan(paused.chunks.length);

      const tab = await openTab(dbName);
      await tab.runner.resume(paused.id);
      await tab.log.status(paused.id, 'done');
      const n = paused.chunks.length;
      expect(tab.log.revisions(paused.id)).toEqual(range(n).slice(k));
      expect((await tab.store.listRevisions(paused.id)).map((r) => r.index)).toEqual(range(n));
      const finished = (await tab.store.getRun(paused.id))!;
      expect(finished).toMatchObject({ status: 'done', nextChunk: n });
      expect(finished.answer).toEqual(expect.any(String));
      // The finished run is untouched.
      expect(await tab.store.getRun(done.id)).toEqual(done);
      tab.store.close();
    });
  }
});
