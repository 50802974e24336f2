import 'fake-indexeddb/auto';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { PART_CHARS } from '../src/core/text-parts';
import { DB_VERSION, type DocumentRecord, type RunRecord, Store, type TextPartRecord } from '../src/storage/db';
import { freshDbName, openTab, range } from './durability-setup';
import { databaseInfo, type Dump, fromJson, restoreDatabase } from './support/db-dump';

/**
 * Databases written by version 1 of the schema, dumped store by store:
 * memagent-db-v1.json by the code of that version (documents, texts, runs,
 * revisions, memories), memagent-db-v1-earliest.json by the first release, which
 * kept each memory inside its revision. Each holds a document, a finished run
 * and a run paused part-way.
 */
function fixture(name: string): Dump {
  return JSON.parse(readFileSync(new URL(`fixtures/${name}`, import.meta.url), 'utf8')) as Dump;
}

const restore = restoreDatabase;

const records = <T>(dump: Dump, store: string) => dump.stores[store]!.records as T[];

/** Every record of one store, read past the Store: how the data lies on disk. */
async function rawRecords<T>(dbName: string, store: string): Promise<T[]> {
  const db = await new Promise<IDBDatabase>((resolve) => {
    const open = indexedDB.open(dbName);
    open.onsuccess = () => resolve(open.result);
  });
  const all = await new Promise<T[]>((resolve) => {
    const req = db.transaction(store).objectStore(store).getAll();
    req.onsuccess = () => resolve(req.result as T[]);
  });
  db.close();
  return all;
}

describe('a version 1 database', () => {
  for (const file of ['memagent-db-v1.json', 'memagent-db-v1-earliest.json']) {
    it(`opens with the current schema without losing anything (${file})`, async () => {
      const dump = fixture(file);
      expect(dump.version).toBe(1);
      const dbName = freshDbName('v1');
      await restore(dbName, dump);

      const store = await Store.open(dbName);
      const info = await databaseInfo(dbName);
      expect(info.version).toBe(DB_VERSION);
      expect(info.stores).toEqual(expect.arrayContaining(['documents', 'textParts', 'runs', 'revisions', 'memories']));
      expect(info.stores).not.toContain('texts');
      expect(await store.listEvaluations()).toEqual([]);

      // Documents, texts and runs come through unchanged (documents now say how their text is cut into parts).
      for (const doc of records<{ id: string }>(dump, 'documents')) expect(await store.getDocument(doc.id)).toEqual({ ...doc, partChars: PART_CHARS });
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
        expect(revisions).toEqual(mine.map(({ memory: _memory, ...r }) => (dump.stores.memories ? r : { ...r, wordsAdded: 0, wordsRemoved: 0, retries: 0 })));
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
      await tab.runner.jobs.resume(paused.id);
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

/**
 * Version 3's layout: version 1's stores plus the evaluations (version 2) and
 * the custom models (version 3), each with a record, as version 3 created them.
 */
function version3(): Dump {
  const dump = fixture('memagent-db-v1.json');
  return {
    name: dump.name,
    version: 3,
    stores: {
      ...dump.stores,
      evaluations: {
        keyPath: 'id',
        indexes: [],
        records: [
          {
            id: 'eval-1',
            engineId: 'extractive',
            haystack: { kind: 'generated' },
            spec: {
              tasks: ['single_1'],
              lengths: [8192],
              samples: 1,
              seed: 7,
              mode: 'memory',
              chunkTokens: 5000,
              memoryTokens: 1024,
              temperature: 0.7,
              topP: 0.95,
              templates: { update: 'update {problem} {memory} {section}', final: 'final {problem} {memory}' },
            },
            total: 1,
            completed: 1,
            status: 'done',
            createdAt: 1795952491000,
            updatedAt: 1795952492000,
          },
        ],
      },
      evaluationSamples: {
        keyPath: ['evaluationId', 'ordinal'],
        indexes: [],
        records: [
          {
            evaluationId: 'eval-1',
            ordinal: 0,
            task: 'single_1',
            length: 8192,
            index: 0,
            seed: 7,
            documentTokens: 8190,
            question: 'What is the special magic number for brave-otter?',
            references: ['4829137'],
            reply: '\\boxed{4829137}',
            answer: '4829137',
            scores: { score: 1, stringMatchAll: 1 },
            chunks: 2,
            chunkMs: 40,
            answerMs: 10,
            generateMs: 5,
            promptTokens: 9000,
            completionTokens: 60,
            committedAt: 1795952492000,
          },
        ],
      },
      customModels: {
        keyPath: 'id',
        indexes: [],
        records: [
          {
            id: 'custom:RL-MemAgent-7B',
            label: 'RL-MemAgent-7B',
            modelUrl: 'https://huggingface.co/someone/RL-MemAgent-7B-q4f16_1-MLC/resolve/main/',
            libUrl: 'https://raw.githubusercontent.com/mlc-ai/binary-mlc-llm-libs/main/Qwen2-7B-Instruct-q4f16_1-ctx4k_cs1k-webgpu.wasm',
            contextLimit: 32768,
            addedAt: 1795952490000,
          },
        ],
      },
    },
  };
}

describe('a version 3 database', () => {
  it('gains a store for measured model speeds and keeps everything it held', async () => {
    const dump = version3();
    const dbName = freshDbName('v3');
    await restore(dbName, dump);

    const store = await Store.open(dbName);
    const info = await databaseInfo(dbName);
    expect(info.version).toBe(DB_VERSION);
    expect(info.stores).toEqual(expect.arrayContaining([...Object.keys(dump.stores).filter((n) => n !== 'texts'), 'calibrations', 'runChunks']));

    for (const doc of records<{ id: string }>(dump, 'documents')) expect(await store.getDocument(doc.id)).toEqual({ ...doc, partChars: PART_CHARS });
    for (const text of records<{ id: string; text: string }>(dump, 'texts')) expect(await store.getText(text.id)).toBe(text.text);
    for (const run of records<RunRecord>(dump, 'runs')) {
      expect(await store.getRun(run.id)).toEqual(run);
      expect(await store.listRevisions(run.id)).toEqual(records<{ runId: string }>(dump, 'revisions').filter((r) => r.runId === run.id));
      expect(await store.listMemories(run.id)).toEqual(
        records<{ runId: string; memory: string }>(dump, 'memories')
          .filter((m) => m.runId === run.id)
          .map((m) => m.memory),
      );
    }
    expect(await store.listEvaluations()).toEqual(records(dump, 'evaluations'));
    expect(await store.listEvaluationSamples('eval-1')).toEqual(records(dump, 'evaluationSamples'));
    expect(await store.listCustomModels()).toEqual(records(dump, 'customModels'));

    // Chunk lists moved out of the run records, which every revision rewrites.
    const runs = records<RunRecord>(dump, 'runs');
    expect(runs.some((r) => r.chunks.length > 0)).toBe(true);
    for (const raw of await rawRecords<Record<string, unknown>>(dbName, 'runs')) expect(raw).not.toHaveProperty('chunks');
    const packed = (chunks: RunRecord['chunks']) => new Uint32Array(chunks.flatMap((c) => [c.start, c.end, c.tokens]));
    expect(await rawRecords(dbName, 'runChunks')).toEqual(runs.map((r) => ({ runId: r.id, spans: packed(r.chunks) })));

    // The new store starts empty and works.
    expect(await store.listSpeeds()).toEqual([]);
    const speed = {
      modelId: 'custom:RL-MemAgent-7B',
      adapter: 'nvidia ampere',
      prefillTokensPerSecond: 1850,
      decodeTokensPerSecond: 38,
      promptTokens: 1030,
      completionTokens: 48,
      source: 'reported' as const,
      measuredAt: 1795952493000,
    };
    await store.putSpeed(speed);
    expect(await store.getSpeed('custom:RL-MemAgent-7B', 'nvidia ampere')).toEqual(speed);
    store.close();
  });
});

/**
 * memagent-db-v4.json: a database written by the code of schema version 4
 * (scripts/dump-db-fixture.ts at that version): a Project Gutenberg book with
 * its header and licence kept beside its text, a finished run and a run paused
 * part-way, a second book, a model added by URL and a measured speed. Version
 * 5 moves each text from one value into parts.
 */
describe('a version 4 database', () => {
  /** The fixture with one book's text made long enough for several parts, astral characters straddling a part boundary. */
  function withLongText(): { dump: Dump; id: string; text: string } {
    const dump = fixture('memagent-db-v4.json');
    const texts = records<{ id: string; text: string; stripped?: unknown }>(dump, 'texts');
    const long = texts.find((t) => t.stripped)!;
    const unit = `${long.text}\n\n`;
    let text = unit.repeat(Math.ceil((2.5 * PART_CHARS) / unit.length));
    text = `${text.slice(0, PART_CHARS - 1)}🌊${text.slice(PART_CHARS - 1)}`; // a surrogate pair cut by the part boundary
    long.text = text;
    const doc = records<{ id: string; chars: number }>(dump, 'documents').find((d) => d.id === long.id)!;
    doc.chars = text.length;
    return { dump, id: long.id, text };
  }

  it('moves every text into parts without losing a character, and keeps what was stripped', async () => {
    const { dump, id, text } = withLongText();
    expect(dump.version).toBe(4);
    const dbName = freshDbName('v4');
    await restore(dbName, dump);

    const store = await Store.open(dbName);
    const info = await databaseInfo(dbName);
    expect(info.version).toBe(DB_VERSION);
    expect(info.stores).toContain('textParts');
    expect(info.stores).not.toContain('texts');

    const texts = records<{ id: string; text: string; stripped?: { header: string; footer: string } }>(dump, 'texts');
    expect(texts.length).toBe(2);
    for (const doc of records<DocumentRecord>(dump, 'documents')) expect(await store.getDocument(doc.id)).toEqual({ ...doc, partChars: PART_CHARS });
    for (const old of texts) {
      expect(await store.getText(old.id)).toBe(old.text);
      expect(await store.getStripped(old.id)).toEqual(old.stripped);
    }
    expect(texts.find((t) => t.id === id)!.stripped?.footer).toMatch(/General Terms of Use/);
    // Ranges across the part boundary read as slices of the whole text do, the split surrogate pair included.
    for (const [from, to] of [
      [PART_CHARS - 10, PART_CHARS + 10],
      [PART_CHARS - 1, PART_CHARS],
      [PART_CHARS, PART_CHARS + 1],
      [0, text.length],
      [2 * PART_CHARS - 3, text.length],
    ] as const) {
      expect(await store.readText(id, from, to)).toBe(text.slice(from, to));
    }

    // On disk: parts of PART_CHARS characters, the stripped text on part 0 only.
    const parts = (await rawRecords<TextPartRecord>(dbName, 'textParts')).filter((p) => p.documentId === id);
    expect(parts.map((p) => p.part)).toEqual([0, 1, 2]);
    expect(parts.map((p) => p.text.length)).toEqual([PART_CHARS, PART_CHARS, text.length - 2 * PART_CHARS]);
    expect(parts[0]!.stripped).toEqual(texts.find((t) => t.id === id)!.stripped);
    expect(parts.slice(1).every((p) => p.stripped === undefined)).toBe(true);

    // Everything else comes through unchanged.
    for (const run of records<RunRecord & { id: string }>(dump, 'runs')) {
      const chunks = fromJson(records<{ runId: string; spans: unknown }>(dump, 'runChunks').find((c) => c.runId === run.id)!.spans) as Uint32Array;
      const expected = {
        ...run,
        chunks: [...Array(chunks.length / 3).keys()].map((i) => ({ start: chunks[3 * i]!, end: chunks[3 * i + 1]!, tokens: chunks[3 * i + 2]! })),
      };
      expect(await store.getRun(run.id)).toEqual(expected);
      expect(await store.listRevisions(run.id)).toEqual(records<{ runId: string }>(dump, 'revisions').filter((r) => r.runId === run.id));
      expect(await store.listMemories(run.id)).toEqual(
        records<{ runId: string; memory: string }>(dump, 'memories')
          .filter((m) => m.runId === run.id)
          .map((m) => m.memory),
      );
    }
    expect(await store.listCustomModels()).toEqual(records(dump, 'customModels'));
    expect(await store.listSpeeds()).toEqual(records(dump, 'calibrations'));
    store.close();
  });

  it('resumes its paused run to the end with the current runner', async () => {
    const dump = fixture('memagent-db-v4.json');
    const dbName = freshDbName('v4-resume');
    await restore(dbName, dump);
    const paused = records<RunRecord>(dump, 'runs').find((r) => r.status === 'paused')!;
    const n = (fromJson(records<{ runId: string; spans: unknown }>(dump, 'runChunks').find((c) => c.runId === paused.id)!.spans) as Uint32Array).length / 3;
    const k = paused.nextChunk;
    expect(k).toBeGreaterThan(0);
    expect(k).toBeLessThan(n);

    const tab = await openTab(dbName);
    await tab.runner.jobs.resume(paused.id);
    await tab.log.status(paused.id, 'done');
    expect(tab.log.revisions(paused.id)).toEqual(range(n).slice(k));
    const finished = (await tab.store.getRun(paused.id))!;
    expect(finished).toMatchObject({ status: 'done', nextChunk: n });
    // The extractive engine finds the planted code in the text read back from parts.
    expect(finished.answer).toContain('4829137');
    tab.store.close();
  });
});
