import 'fake-indexeddb/auto';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ExtractiveEngine } from '../src/engines/extractive/engine';
import { loadQwenTokenizer } from '../src/engines/qwen-tokenizer';
import { wireParts } from './runner-setup';
import { DB_VERSION, Store } from '../src/storage/db';
import { freshDbName } from './durability-setup';
import { databaseInfo, type Dump, restoreDatabase } from './support/db-dump';

describe('schema version 8: follow-up answers', () => {
  it('gives a database of an older version a store for follow-up answers; its finished run can be asked again, and the answer stays across a reopening', async () => {
    const dump = JSON.parse(readFileSync(new URL('fixtures/memagent-db-v4.json', import.meta.url), 'utf8')) as Dump;
    const dbName = freshDbName('v4-followups');
    await restoreDatabase(dbName, dump);

    const store = await Store.open(dbName);
    expect(DB_VERSION).toBeGreaterThanOrEqual(8);
    expect(await databaseInfo(dbName)).toMatchObject({ version: DB_VERSION, stores: expect.arrayContaining(['followUps', 'runs', 'textParts']) });
    expect(await store.listFollowUps('v4-run-1')).toEqual([]);

    const tok = await loadQwenTokenizer();
    const { runner } = wireParts({ store, createEngine: async () => new ExtractiveEngine(tok), tokenizerFor: async () => tok, publish: () => undefined });
    const done = (await store.getRun('v4-run-1'))!;
    expect(done.status).toBe('done');
    const answer = await runner.askFollowUp('v4-run-1', done.question);
    await expect(runner.askFollowUp('v4-run-2', done.question)).rejects.toThrow(/has not finished/);
    store.close();

    const again = await Store.open(dbName);
    expect(await again.listFollowUps('v4-run-1')).toEqual([answer]);
    expect(await again.listFollowUps('v4-run-2')).toEqual([]);
    again.close();
  });
});
