import { createServer } from 'node:http';
import { CacheManager } from '@wllama/wllama';
import { describe, expect, it } from 'vitest';
import { type DownloadCache, deleteStoredModel, listStoredModels } from '../src/engines/wllama/files';
import { CacheFileStore, DOWNLOADS, type FileStore, MemoryFileStore, modelStorageKind } from '../src/engines/wllama/model-stores';
import { openLocalModel, saveLocalModel, storeShelf } from '../src/engines/wllama/picked-models';
import { FakeCaches } from './support/fake-caches';

const ORIGIN = 'http://127.0.0.1:4173';
const gguf = (name: string, n: number) => new File([new Uint8Array(n).map((_, i) => (i * 7) % 251)], name, { lastModified: 1_700_000_000_000 });

async function bytesOf(blob: Blob): Promise<number[]> {
  return [...new Uint8Array(await blob.arrayBuffer())];
}

/** Serves `body` at /model.gguf, as a model host does. */
async function host(body: Uint8Array): Promise<{ url: string; close(): Promise<void> }> {
  const server = createServer((req, res) => {
    if (req.url !== '/model.gguf') return void res.writeHead(404).end();
    res.writeHead(200, { 'Content-Length': String(body.byteLength), 'Content-Type': 'application/octet-stream' });
    res.end(req.method === 'HEAD' ? undefined : body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return { url: `http://127.0.0.1:${port}/model.gguf`, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

describe('where llama.cpp keeps models in this browser', () => {
  const caches = { open: () => undefined };
  it('uses the private file system where it opens', async () => {
    expect(await modelStorageKind({ navigator: { storage: { getDirectory: async () => ({}) } }, caches })).toBe('opfs');
  });

  it('uses Cache Storage where there is no private file system (WebKitGTK by default), or one that will not open (WebKit sessions that keep nothing)', async () => {
    expect(await modelStorageKind({ navigator: {}, caches })).toBe('cache');
    expect(await modelStorageKind({ navigator: { storage: {} }, caches })).toBe('cache');
    const unusable = () => Promise.reject(new DOMException('The operation failed for an unknown transient reason (e.g. out of memory).', 'UnknownError'));
    expect(await modelStorageKind({ navigator: { storage: { getDirectory: unusable } }, caches })).toBe('cache');
  });

  it('keeps models in memory where there is neither', async () => {
    expect(await modelStorageKind({ navigator: {} })).toBe('memory');
  });
});

describe('a download kept in Cache Storage by wllama’s own cache', () => {
  it('is stored whole, read back, listed with its size and host, and deleted', async () => {
    const body = new Uint8Array(70_000).map((_, i) => i % 256);
    const server = await host(body);
    try {
      const caches = new FakeCaches();
      const cache = new CacheManager([new CacheFileStore(DOWNLOADS, caches.asCacheStorage(), ORIGIN)]);
      await cache.download(server.url);
      expect(await bytesOf((await cache.open(server.url))!)).toEqual([...body]);
      const shelf = storeShelf(new MemoryFileStore());
      const [model, ...rest] = await listStoredModels(cache as unknown as DownloadCache, shelf);
      expect(rest).toEqual([]);
      expect(model).toMatchObject({ id: `download:${server.url}`, name: 'model.gguf', bytes: 70_000, complete: true, origin: new URL(server.url).host });
      // Loaded again, it is not fetched again: the server is gone.
      await server.close();
      await cache.download(server.url);
      await deleteStoredModel(model!.id, cache as unknown as DownloadCache, shelf);
      expect(await listStoredModels(cache as unknown as DownloadCache, shelf)).toEqual([]);
      expect(caches.keys(DOWNLOADS)).toEqual([]);
    } finally {
      await server.close().catch(() => undefined);
    }
  });

  it('counts a file whose writing was cut short as absent', async () => {
    const caches = new FakeCaches();
    const store = new CacheFileStore(DOWNLOADS, caches.asCacheStorage(), ORIGIN);
    const failing = new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(new Uint8Array(10));
        c.error(new TypeError('network error'));
      },
    });
    await expect(store.write('a.gguf', failing)).rejects.toThrow();
    expect(await store.getSize('a.gguf')).toBe(-1);
    expect(await store.list()).toEqual([]);
  });
});

describe('picked model files where there is no private file system', () => {
  const stores: [string, () => FileStore][] = [
    ['Cache Storage', () => new CacheFileStore('memagent-local-models', new FakeCaches().asCacheStorage(), ORIGIN)],
    ['memory, until the page closes', () => new MemoryFileStore()],
  ];
  for (const [where, make] of stores) {
    it(`are kept in ${where}, opened in part order, listed and deleted`, async () => {
      const shelf = storeShelf(make());
      const files = [gguf('m-00002-of-00002.gguf', 300), gguf('m-00001-of-00002.gguf', 500)];
      const progress: number[] = [];
      const { key, bytes } = await saveLocalModel(files, (f) => progress.push(f), shelf);
      expect(bytes).toBe(800);
      expect(progress.at(-1)).toBe(1);
      const opened = await openLocalModel(key, shelf);
      expect(opened.map((f) => f.name)).toEqual(['m-00001-of-00002.gguf', 'm-00002-of-00002.gguf']);
      expect(await bytesOf(opened[0]!)).toEqual(await bytesOf(files[1]!));
      const cache: DownloadCache = { list: async () => [], deleteMany: async () => undefined };
      expect(await listStoredModels(cache, shelf)).toEqual([
        { id: `file:${key}`, model: key, name: 'm-00001-of-00002.gguf (2 parts)', origin: 'a file on this device', bytes: 800, complete: true },
      ]);
      await deleteStoredModel(`file:${key}`, cache, shelf);
      expect(await listStoredModels(cache, shelf)).toEqual([]);
      await expect(openLocalModel(key, shelf)).rejects.toThrow('no longer stored in this browser');
    });
  }

  it('refuses a copy that was not finished', async () => {
    const store = new MemoryFileStore();
    store.keep('k/m.gguf', gguf('m.gguf', 10));
    await expect(openLocalModel('k', storeShelf(store))).rejects.toThrow('was not finished');
  });
});
