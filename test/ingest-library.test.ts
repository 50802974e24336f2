import 'fake-indexeddb/auto';
import { describe, expect, it } from 'vitest';
import { INITIAL_MEMORY } from '../src/core/prompts';
import type { IngestProgress } from '../src/ingest/ingest';
import { wireParts } from './runner-setup';
import { type RunRecord, Store, StorageFullError } from '../src/storage/db';
import { FACT, makeEpub, owned } from './fixtures/documents';
import { corpusBytes, words } from './helpers';

let dbCount = 0;
async function setup(estimate?: { usage?: number; quota?: number }) {
  const store = await Store.open(`library-${dbCount++}`);
  const { library, runner } = wireParts({
    store,
    createEngine: () => Promise.reject(new Error('no engine in these tests')),
    tokenizerFor: async () => words,
    publish: () => undefined,
    estimateStorage: estimate ? async () => estimate : undefined,
  });
  return { store, runner, library };
}

function run(id: string, documentId: string): RunRecord {
  return {
    id,
    documentId,
    documentName: 'x',
    question: FACT.question,
    engineId: 'extractive',
    settings: { requestedChunkTokens: 100, chunkTokens: 100, memoryTokens: 64, contextTokens: 1000, temperature: 0.7, topP: 0.95 },
    templates: { update: '', final: '' } as RunRecord['templates'],
    chunks: [],
    status: 'done',
    nextChunk: 0,
    memory: INITIAL_MEMORY,
    createdAt: 1,
    updatedAt: 1,
  };
}

describe('the library in storage', () => {
  it('stores a document with its structure, counted tokens and what Gutenberg stripping removed', async () => {
    const { store, library } = await setup();
    const progress: IngestProgress[] = [];
    const doc = await library.ingest('frankenstein.txt', corpusBytes('frankenstein.txt'), 'extractive', {
      onProgress: (p) => progress.push(p),
    });
    expect(doc.format).toBe('text');
    expect(await store.getAnchors(doc.id)).toHaveLength(28);
    expect(doc.anchors).toBeUndefined(); // kept with the text's first part, not read with every listing
    expect(doc.tokens).toBe(words.count((await store.getText(doc.id))!));
    expect(doc.stripped).toEqual({ header: expect.any(Number), footer: expect.any(Number) });
    const stripped = await store.getStripped(doc.id);
    expect(stripped!.header.length).toBe(doc.stripped!.header);
    expect(stripped!.footer).toContain('END OF THIS PROJECT GUTENBERG EBOOK');
    // Progress only moves forward, and ends at 1.
    const fractions = progress.map((p) => p.fraction);
    expect(fractions).toEqual([...fractions].sort((a, b) => a - b));
    expect(progress.at(-1)).toEqual({ stage: 'Done', fraction: 1 });
    expect((await store.listDocuments()).map((d) => d.id)).toEqual([doc.id]);
  });

  it('keeps the same file added twice as one document, whatever its name', async () => {
    const { store, library } = await setup();
    const epub = makeEpub();
    const a = await library.ingest('a.epub', epub, 'extractive');
    const b = await library.ingest('b.epub', owned(epub), 'extractive');
    expect(b).toEqual(a);
    expect(await store.listDocuments()).toHaveLength(1);
  });

  it('deletes a document with its text, runs, revisions and memories in one go, and nothing of other documents', async () => {
    const { store, library } = await setup();
    const keep = await library.ingest('keep.epub', makeEpub({ toc: 'ncx' }), 'extractive');
    const drop = await library.ingest('drop.epub', makeEpub(), 'extractive');
    await store.createRun(run('r1', drop.id));
    await store.createRun(run('r2', drop.id));
    await store.createRun(run('r3', keep.id));
    for (const runId of ['r1', 'r2', 'r3']) {
      for (const index of [0, 1]) {
        await store.commitRevision(
          {
            runId,
            index,
            memoryTokens: 1,
            wordsAdded: 1,
            wordsRemoved: 0,
            start: 0,
            end: 1,
            chunkTokens: 1,
            promptTokens: 1,
            completionTokens: 1,
            ms: 1,
            finishReason: 'stop',
            retries: 0,
            committedAt: 1,
          },
          `memory ${runId} ${index}`,
        );
      }
    }
    expect(await library.deleteDocument(drop.id)).toEqual({ runs: 2 });
    expect((await store.listDocuments()).map((d) => d.name)).toEqual(['keep.epub']);
    expect(await store.getText(drop.id)).toBeUndefined();
    expect((await store.listRuns()).map((r) => r.id)).toEqual(['r3']);
    for (const runId of ['r1', 'r2']) {
      expect(await store.listRevisions(runId)).toEqual([]);
      expect(await store.listMemories(runId)).toEqual([]);
    }
    expect(await store.listRevisions('r3')).toHaveLength(2);
    expect(await store.listMemories('r3')).toEqual(['memory r3 0', 'memory r3 1']);
  });

  it('refuses a book the browser has no room for, before storing anything', async () => {
    const { store, library } = await setup({ usage: 9_900_000, quota: 10_000_000 });
    await expect(library.ingest('frankenstein.txt', corpusBytes('frankenstein.txt'), 'extractive')).rejects.toThrow(StorageFullError);
    await expect(library.ingest('frankenstein.txt', corpusBytes('frankenstein.txt'), 'extractive')).rejects.toThrow(
      /"frankenstein\.txt" needs about 0\.8 MB of storage, but this browser allows this site only 0\.1 MB more/,
    );
    expect(await store.listDocuments()).toEqual([]);
  });

  it('refuses a file too large to read without reading it', async () => {
    const { library } = await setup();
    const huge = { name: 'huge.txt', size: 300 * 1024 * 1024, arrayBuffer: () => Promise.reject(new Error('read')) };
    await expect(library.ingestFile(huge as unknown as Blob & { name: string }, 'extractive')).rejects.toThrow(/largest file this app reads is 256 MB/);
  });
});
