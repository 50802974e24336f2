import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CACHE_NAMES, downloadModel, modelCacheState } from '../src/engines/webllm/models/model-download';
import { FileCaches } from '../src/engines/webllm/node/file-caches';
import { appConfigFor, customEntry } from '../src/engines/webllm/models/models';
import { WEBLLM_0_2_79 } from '../src/engines/webllm/versions';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'memagent-file-caches-'));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
  delete (globalThis as { caches?: unknown }).caches;
});

const URL_A = 'https://hf.example/org/M/resolve/main/params_shard_0.bin';

describe('Cache Storage on a folder', () => {
  it('keeps entries by URL, with their headers, across instances (processes), and deletes them', async () => {
    const caches = new FileCaches(dir);
    const cache = await caches.open('webllm/model');
    await cache.put(URL_A, new Response(new Uint8Array([1, 2, 3]), { headers: { 'Content-Type': 'application/octet-stream' } }));
    await cache.put(new Request(`${URL_A}?memagent-part=0-3`), new Response('abc'));

    const again = await new FileCaches(dir).open('webllm/model');
    const hit = await again.match(new Request(URL_A));
    expect(new Uint8Array(await hit!.arrayBuffer())).toEqual(new Uint8Array([1, 2, 3]));
    expect(hit!.headers.get('content-type')).toBe('application/octet-stream');
    expect(hit!.headers.get('content-length')).toBe('3');
    expect((await again.keys()).map((r) => r.url).sort()).toEqual([URL_A, `${URL_A}?memagent-part=0-3`]);
    expect(await again.match('https://hf.example/other')).toBeUndefined();
    expect(await new FileCaches(dir).keys()).toEqual(['webllm/model']);

    expect(await again.delete(URL_A)).toBe(true);
    expect(await again.delete(URL_A)).toBe(false);
    expect(await again.match(URL_A)).toBeUndefined();
    expect(await caches.delete('webllm/model')).toBe(true);
    expect(await caches.has('webllm/model')).toBe(false);
  });

  it('stores nothing of a body that fails half-way, and a later open clears what a stopped process left', async () => {
    const cache = await new FileCaches(dir).open('webllm/model');
    let sent = false;
    const failing = new ReadableStream<Uint8Array>({
      pull(c) {
        if (sent) return c.error(new TypeError('network error'));
        sent = true;
        c.enqueue(new Uint8Array(1000));
      },
    });
    await expect(cache.put(URL_A, new Response(failing))).rejects.toThrow('network error');
    expect(await cache.match(URL_A)).toBeUndefined();
    expect(readdirSync(cache.dir)).toEqual([]);

    // A process that died mid-write (pid 2^22 + 1 is beyond any live one) left a temporary file.
    writeFileSync(join(cache.dir, `abc.body.tmp-${2 ** 22 + 1}-1`), 'half');
    // This process's own temporary files are its writes in progress: they stay.
    writeFileSync(join(cache.dir, `def.body.tmp-${process.pid}-1`), 'writing');
    await new FileCaches(dir).open('webllm/model');
    expect(readdirSync(cache.dir)).toEqual([`def.body.tmp-${process.pid}-1`]);
  });

  it('says a full disk as a quota error, which the downloader explains', async () => {
    const cache = await new FileCaches(dir).open('webllm/model');
    const noRoom = new ReadableStream({ start: (c) => c.error(Object.assign(new Error('no space left on device'), { code: 'ENOSPC' })) });
    await expect(cache.put(URL_A, new Response(noRoom))).rejects.toMatchObject({ name: 'QuotaExceededError' });
    expect(readdirSync(cache.dir)).toEqual([]);
  });

  it('holds a download the app’s downloader resumes in a new process, where WebLLM’s own check finds the model', async () => {
    const model = customEntry({
      id: 'custom:files',
      label: 'Files',
      modelUrl: 'https://hf.example/org/Files-MLC',
      libUrl: 'https://libs.example/f.wasm',
      contextLimit: 32768,
    });
    const base = model.modelUrl;
    const SHARD = 256 * 1024;
    const shard = (i: number) => new Uint8Array(SHARD).fill(i + 1);
    const index = JSON.stringify({ records: [0, 1].map((i) => ({ dataPath: `params_shard_${i}.bin`, nbytes: SHARD })) });
    const ranges: string[] = [];
    let drop = true;
    const files: Record<string, () => Uint8Array<ArrayBuffer> | string> = {
      [`${base}mlc-chat-config.json`]: () => JSON.stringify({ tokenizer_files: ['tokenizer.json'] }),
      [`${base}tokenizer.json`]: () => JSON.stringify({ model: { type: 'BPE' } }),
      [`${base}ndarray-cache.json`]: () => index,
      [model.libUrl]: () => new Uint8Array([0, 97, 115, 109]),
      [`${base}params_shard_0.bin`]: () => shard(0),
      [`${base}params_shard_1.bin`]: () => shard(1),
    };
    const fetchFn = (async (input: RequestInfo | URL, init?: RequestInit) => {
      const url = String(input);
      const body = files[url]?.();
      if (body === undefined) return new Response('not found', { status: 404 });
      if (!url.endsWith('_1.bin')) return new Response(body);
      const range = new Headers(init?.headers).get('range');
      if (range) ranges.push(range);
      const from = Number(/^bytes=(\d+)-$/.exec(range ?? '')?.[1] ?? 0);
      const rest = (body as Uint8Array).slice(from);
      const headers = { 'Accept-Ranges': 'bytes', ...(from && { 'Content-Range': `bytes ${from}-${SHARD - 1}/${SHARD}` }) };
      if (!drop) return new Response(rest, { status: from ? 206 : 200, headers });
      if (from) return new Response('busy', { status: 503 });
      // Half the shard, then the connection drops; the host stays busy until this process gives up.
      let sent = false;
      const stream = new ReadableStream<Uint8Array>({
        pull(c) {
          if (sent) return c.error(new TypeError('network error'));
          sent = true;
          c.enqueue(rest.slice(0, SHARD / 2));
        },
      });
      return new Response(stream, { status: 200, headers });
    }) as typeof fetch;
    const options = { fetch: fetchFn, webllm: WEBLLM_0_2_79, online: () => true, retries: 0, keepEveryMs: 0, retryDelayMs: 0 };

    await expect(downloadModel(model, { ...options, caches: new FileCaches(dir).asCacheStorage() })).rejects.toMatchObject({ kind: 'network' });
    const first = await modelCacheState(model, { caches: new FileCaches(dir).asCacheStorage(), webllm: WEBLLM_0_2_79 });
    expect(first).toMatchObject({ complete: false, partial: true, bytesTotal: 2 * SHARD, bytesCached: SHARD + SHARD / 2 });

    drop = false;
    ranges.length = 0;
    const caches = new FileCaches(dir);
    const second = await downloadModel(model, { ...options, caches: caches.asCacheStorage() });
    expect(ranges).toEqual([`bytes=${SHARD / 2}-`]);
    expect(second.bytesFetched).toBe(SHARD / 2);
    const stored = await (await caches.open(CACHE_NAMES.model)).match(`${base}params_shard_1.bin`);
    expect(new Uint8Array(await stored!.arrayBuffer())).toEqual(shard(1));

    (globalThis as { caches?: unknown }).caches = caches.asCacheStorage();
    const { hasModelInCache } = (await import('@mlc-ai/web-llm-0279')) as unknown as { hasModelInCache(id: string, config: unknown): Promise<boolean> };
    expect(await hasModelInCache(model.id, appConfigFor(model, WEBLLM_0_2_79))).toBe(true);
  });

  it('reports the room on the disk as a quota', async () => {
    const { quota, usage } = await new FileCaches(dir).estimate();
    expect(usage).toBe(0);
    expect(quota).toBeGreaterThan(0);
  });
});
