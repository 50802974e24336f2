import 'fake-indexeddb/auto';
import { describe, expect, it } from 'vitest';
import { sharedMemory } from '../src/engines/shared-memory';
import { ingestBytes } from '../src/ingest/ingest';
import { effectiveThreads } from '../src/engines/wllama/models';
import { estimateStorage } from '../src/engines/storage-room';
import { Store } from '../src/storage/db';
import { bookPages, FACT, makePdf } from './fixtures/documents';
import { corpusBytes, words } from './helpers';
import { wireParts } from './runner-setup';

describe('the storage estimate where the browser may not give one', () => {
  it('is unknown without navigator.storage (WebKitGTK by default)', async () => {
    expect(await estimateStorage(undefined)).toEqual({});
  });

  it('is unknown where StorageManager has no estimate', async () => {
    expect(await estimateStorage({})).toEqual({});
  });

  it('is unknown, not an error, where estimate throws at once or rejects', async () => {
    const throws = {
      estimate: (): Promise<{ usage?: number; quota?: number }> => {
        throw new TypeError("undefined is not an object (evaluating 'navigator.storage.estimate')");
      },
    };
    expect(await estimateStorage(throws)).toEqual({});
    expect(await estimateStorage({ estimate: () => Promise.reject(new Error('denied')) })).toEqual({});
  });

  it('gives usage and quota where the browser tells them', async () => {
    expect(await estimateStorage({ estimate: async () => ({ usage: 5, quota: 10 }) })).toEqual({ usage: 5, quota: 10 });
  });
});

describe('an import where the storage estimate throws synchronously', () => {
  it('stores the book instead of failing with the raw message', async () => {
    const store = await Store.open('optional-apis-estimate');
    const { library } = wireParts({
      store,
      createEngine: () => Promise.reject(new Error('no engine in these tests')),
      tokenizerFor: async () => words,
      publish: () => undefined,
      estimateStorage: () => {
        throw new TypeError("undefined is not an object (evaluating 'navigator.storage.estimate')");
      },
    });
    const doc = await library.ingest('frankenstein.txt', corpusBytes('frankenstein.txt'), 'extractive');
    expect(doc.format).toBe('text');
    expect((await store.listDocuments()).map((d) => d.id)).toEqual([doc.id]);
  });
});

describe('llama.cpp threads without SharedArrayBuffer', () => {
  it('shares memory only where the page is isolated and SharedArrayBuffer exists', () => {
    expect(sharedMemory({ crossOriginIsolated: true, SharedArrayBuffer })).toBe(true);
    // WebKit: isolated, yet no SharedArrayBuffer.
    expect(sharedMemory({ crossOriginIsolated: true })).toBe(false);
    expect(sharedMemory({ crossOriginIsolated: false, SharedArrayBuffer })).toBe(false);
    expect(sharedMemory({})).toBe(false);
  });

  it('runs on one thread where memory cannot be shared', () => {
    expect(effectiveThreads(4, 8, sharedMemory({ crossOriginIsolated: true }))).toBe(1);
    expect(effectiveThreads(4, 8, sharedMemory({ crossOriginIsolated: true, SharedArrayBuffer }))).toBe(4);
  });
});

describe('a PDF where ReadableStream cannot be iterated with for await (WebKit)', () => {
  it("reads every page's text", async () => {
    const proto = ReadableStream.prototype as unknown as Record<symbol, unknown>;
    const iterate = proto[Symbol.asyncIterator];
    delete proto[Symbol.asyncIterator];
    try {
      expect(Symbol.asyncIterator in new ReadableStream()).toBe(false);
      const doc = await ingestBytes('book.pdf', await makePdf(bookPages()));
      expect(doc.pages).toBe(4);
      expect(doc.text).toContain(FACT.sentence);
    } finally {
      proto[Symbol.asyncIterator] = iterate;
    }
  });
});
