import 'fake-indexeddb/auto';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ExtractiveEngine } from '../src/engines/extractive/engine';
import { loadQwenTokenizer } from '../src/engines/qwen-tokenizer';
import { DB_VERSION, RUN_ANSWER, Store } from '../src/storage/db';
import { freshDbName } from './durability-setup';
import { wireParts } from './runner-setup';
import { databaseInfo, type Dump, restoreDatabase } from './support/db-dump';

describe('schema version 10: the sources of answers', () => {
  it('gives an older database a store for sources; its finished run, read before sources were kept, has them traced when asked, and they stay', async () => {
    const dump = JSON.parse(readFileSync(new URL('fixtures/memagent-db-v4.json', import.meta.url), 'utf8')) as Dump;
    const dbName = freshDbName('v4-sources');
    await restoreDatabase(dbName, dump);

    const store = await Store.open(dbName);
    expect(DB_VERSION).toBe(10);
    expect(await databaseInfo(dbName)).toMatchObject({ version: 10, stores: expect.arrayContaining(['sources', 'collections', 'followUps', 'runs']) });
    expect(await store.listSources('v4-run-1')).toEqual([]);

    const tok = await loadQwenTokenizer();
    const events: unknown[] = [];
    const { runner } = wireParts({ store, createEngine: async () => new ExtractiveEngine(tok), tokenizerFor: async () => tok, publish: (e) => events.push(e) });
    await runner.findSources('v4-run-1');
    const traced = (await store.getSources('v4-run-1', RUN_ANSWER))!;
    expect(traced.sections).toBe(true);
    expect(traced.citations.map((c) => c.sentence?.text)).toContain('The vault code for the Marlowe archive is 4829137.');
    expect(events).toContainEqual({ type: 'sources', runId: 'v4-run-1', answer: RUN_ANSWER });
    // A paused run has no answer to trace.
    await runner.findSources('v4-run-2');
    expect(await store.listSources('v4-run-2')).toEqual([]);
    store.close();

    const again = await Store.open(dbName);
    expect(await again.getSources('v4-run-1', RUN_ANSWER)).toEqual(traced);
    again.close();
  });
});
