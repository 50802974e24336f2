import 'fake-indexeddb/auto';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ExtractiveEngine } from '../src/engines/extractive/engine';
import { loadQwenTokenizer } from '../src/engines/qwen-tokenizer';
import { BookCollections } from '../src/library/collections';
import { DB_VERSION, Store } from '../src/storage/db';
import { freshDbName } from './durability-setup';
import { databaseInfo, type Dump, restoreDatabase } from './support/db-dump';
import { wireParts } from './runner-setup';

describe('schema version 9: collections', () => {
  it('gives a database of an older version a store for collections, keeping its books and runs; its books are kept and read as a set', async () => {
    const dump = JSON.parse(readFileSync(new URL('fixtures/memagent-db-v4.json', import.meta.url), 'utf8')) as Dump;
    const dbName = freshDbName('v4-collections');
    await restoreDatabase(dbName, dump);

    const store = await Store.open(dbName);
    expect(DB_VERSION).toBeGreaterThanOrEqual(9);
    expect(await databaseInfo(dbName)).toMatchObject({
      version: DB_VERSION,
      stores: expect.arrayContaining(['collections', 'followUps', 'runs', 'textParts']),
    });
    expect(await store.listCollections()).toEqual([]);
    const docs = (await store.listDocuments()).sort((a, b) => a.name.localeCompare(b.name));
    expect(docs.map((d) => d.name)).toEqual(['harbour.md', 'marlowe-papers.txt']);
    expect((await store.listRuns()).map((r) => r.id).sort()).toEqual(['v4-run-1', 'v4-run-2']);

    const events: unknown[] = [];
    const kept = await new BookCollections({ store, publish: (e) => events.push(e) }).save('Old papers', [docs[1]!.id, docs[0]!.id]);
    const tok = await loadQwenTokenizer();
    const { runner } = wireParts({ store, createEngine: async () => new ExtractiveEngine(tok), tokenizerFor: async () => tok, publish: () => undefined });
    const runId = await runner.start({
      documentId: kept.documentIds[0]!,
      documentIds: kept.documentIds,
      question: 'Who keeps the archive?',
      engineId: 'extractive',
    });
    await runner.jobs.settled(runId);
    const run = (await store.getRun(runId))!;
    expect(run.status).toBe('done');
    expect(run.books!.map((b) => b.name)).toEqual(['marlowe-papers.txt', 'harbour.md']);
    store.close();

    const again = await Store.open(dbName);
    expect(await again.listCollections()).toEqual([kept]);
    again.close();
  });
});
