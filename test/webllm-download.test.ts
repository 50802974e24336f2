import { describe, expect, it } from 'vitest';
import {
  CACHE_NAMES,
  deleteModelFiles,
  type DownloadOptions,
  downloadModel,
  type DownloadProgress,
  fileUrls,
  modelCacheState,
  ModelDownloadError,
  WEIGHTS_INDEX,
} from '../src/engines/webllm/models/model-download';
import { PARTS_CACHE, PartStore } from '../src/engines/webllm/models/model-parts';
import { droppingBody, FakeCaches } from './support/fake-caches';

const MODEL = { modelUrl: 'https://hf.example/org/Model-MLC/resolve/main/', libUrl: 'https://libs.example/Qwen2-7B.wasm' };
const SHARD = 64 * 1024;
const SHARDS = 5;
const base = MODEL.modelUrl;

function shard(i: number): Uint8Array<ArrayBuffer> {
  return new Uint8Array(SHARD).fill(i + 1);
}

type Fault = (url: string, attempt: number, range: string | null) => Response | undefined;

const INDEX = JSON.stringify({ records: Array.from({ length: SHARDS }, (_, i) => ({ dataPath: `params_shard_${i}.bin`, nbytes: SHARD })) });

/**
 * A model host in a function: every file of an MLC conversion, with faults on
 * demand, counting requests. `ranges`: shards answer Range with 206, as CDNs
 * do; `older`: the index is ndarray-cache.json, as older MLC conversions name it.
 */
function host(fault: Fault = () => undefined, opts: { ranges?: boolean; older?: boolean } = {}) {
  const requests: string[] = [];
  const ranges: (string | null)[] = [];
  const files = new Map<string, () => Uint8Array<ArrayBuffer> | string>([
    [`${base}mlc-chat-config.json`, () => JSON.stringify({ tokenizer_files: ['tokenizer.json'], context_window_size: 32768 })],
    [`${base}tokenizer.json`, () => JSON.stringify({ model: { type: 'BPE' } })],
    [`${base}${opts.older ? 'ndarray-cache.json' : 'tensor-cache.json'}`, () => INDEX],
    [MODEL.libUrl, () => new Uint8Array([0, 97, 115, 109])],
    ...Array.from({ length: SHARDS }, (_, i) => [`${base}params_shard_${i}.bin`, () => shard(i)] as [string, () => Uint8Array<ArrayBuffer>]),
  ]);
  const fetch = (async (input: RequestInfo | URL, init?: RequestInit) => {
    const url = String(input);
    const range = new Headers(init?.headers).get('range');
    requests.push(url);
    ranges.push(range);
    const injected = fault(url, requests.filter((u) => u === url).length, range);
    if (injected) return injected;
    const body = files.get(url)?.();
    if (body === undefined) return new Response('not found', { status: 404 });
    if (!opts.ranges || !url.endsWith('.bin')) return new Response(body);
    const from = Number(/^bytes=(\d+)-$/.exec(range ?? '')?.[1] ?? NaN);
    if (Number.isNaN(from)) return new Response(body, { headers: { 'Accept-Ranges': 'bytes' } });
    const rest = (body as Uint8Array<ArrayBuffer>).slice(from);
    return new Response(rest, { status: 206, headers: { 'Accept-Ranges': 'bytes', 'Content-Range': `bytes ${from}-${SHARD - 1}/${SHARD}` } });
  }) as typeof globalThis.fetch;
  return { fetch, requests, ranges, count: (suffix: string) => requests.filter((u) => u.endsWith(suffix)).length };
}

function options(h: ReturnType<typeof host>, caches: FakeCaches, extra: Partial<DownloadOptions> = {}): DownloadOptions {
  return { fetch: h.fetch, caches: caches.asCacheStorage(), estimate: async () => ({ usage: 0, quota: 1e12 }), online: () => true, retryDelayMs: 1, ...extra };
}

describe('the model downloader', () => {
  it('puts every file WebLLM loads into its three caches, under the URLs WebLLM looks up', async () => {
    const h = host();
    const caches = new FakeCaches();
    const progress: DownloadProgress[] = [];
    const result = await downloadModel(MODEL, options(h, caches, { onProgress: (p) => progress.push(p) }));
    expect(result).toEqual({ bytesTotal: SHARDS * SHARD, bytesFetched: SHARDS * SHARD });
    expect(caches.keys(CACHE_NAMES.config)).toEqual([`${base}mlc-chat-config.json`]);
    expect(caches.keys(CACHE_NAMES.wasm)).toEqual([MODEL.libUrl]);
    expect(caches.keys(CACHE_NAMES.model)).toEqual(
      [...Array.from({ length: SHARDS }, (_, i) => `${base}params_shard_${i}.bin`), `${base}tensor-cache.json`, `${base}tokenizer.json`].sort(),
    );
    const stored = await (await (await caches.open(CACHE_NAMES.model)).match(`${base}params_shard_3.bin`))!.arrayBuffer();
    expect(new Uint8Array(stored)).toEqual(shard(3));
    const fractions = progress.map((p) => p.fraction);
    expect(fractions[0]).toBe(0);
    expect(fractions.at(-1)).toBe(1);
    expect(fractions).toEqual([...fractions].sort((a, b) => a - b));
    expect(await modelCacheState(MODEL, { caches: caches.asCacheStorage() })).toEqual({
      complete: true,
      partial: true,
      bytesCached: SHARDS * SHARD,
      bytesTotal: SHARDS * SHARD,
    });
  });

  it('fetches nothing for a model already cached, even offline', async () => {
    const caches = new FakeCaches();
    await downloadModel(MODEL, options(host(), caches));
    const again = host();
    const result = await downloadModel(MODEL, options(again, caches, { online: () => false }));
    expect(again.requests).toEqual([]);
    expect(result.bytesFetched).toBe(0);
  });

  it('keeps the finished files when a shard keeps dropping, and a second call fetches only what is missing', async () => {
    const caches = new FakeCaches();
    const flaky = host((url) => (url.endsWith('params_shard_2.bin') ? new Response(droppingBody(shard(2), SHARD / 2)) : undefined));
    const error = await downloadModel(MODEL, options(flaky, caches, { concurrency: 1 })).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ModelDownloadError);
    expect((error as ModelDownloadError).kind).toBe('network');
    expect((error as Error).message).toMatch(/weights file params_shard_2\.bin .*tried 4 times.*press Download again to resume/);
    expect(flaky.count('params_shard_2.bin')).toBe(4); // the first try and 3 retries
    const state = await modelCacheState(MODEL, { caches: caches.asCacheStorage() });
    expect(state).toMatchObject({ complete: false, partial: true, bytesCached: 2 * SHARD, bytesTotal: SHARDS * SHARD });

    const healed = host();
    const result = await downloadModel(MODEL, options(healed, caches));
    expect(result.bytesFetched).toBe(3 * SHARD);
    expect(healed.requests.filter((u) => u.endsWith('.bin')).sort()).toEqual([2, 3, 4].map((i) => `${base}params_shard_${i}.bin`));
    expect((await modelCacheState(MODEL, { caches: caches.asCacheStorage() })).complete).toBe(true);
  });

  it('retries a shard that drops once, and a body cut short without an error', async () => {
    const caches = new FakeCaches();
    const h = host((url, attempt) => {
      if (url.endsWith('params_shard_1.bin') && attempt === 1) return new Response(droppingBody(shard(1), 100));
      if (url.endsWith('params_shard_4.bin') && attempt === 1) return new Response(shard(4).slice(0, SHARD - 1));
      return undefined;
    });
    await downloadModel(MODEL, options(h, caches));
    expect(h.count('params_shard_1.bin')).toBe(2);
    expect(h.count('params_shard_4.bin')).toBe(2);
    expect((await modelCacheState(MODEL, { caches: caches.asCacheStorage() })).complete).toBe(true);
  });

  it('gives up at once on a 404, saying which file and what to check', async () => {
    const h = host((url) => (url.endsWith('params_shard_3.bin') ? new Response('gone', { status: 404 }) : undefined));
    const error = (await downloadModel(MODEL, options(h, new FakeCaches())).catch((e: unknown) => e)) as ModelDownloadError;
    expect(error.kind).toBe('not-found');
    expect(error.message).toContain(`weights file params_shard_3.bin was not found at ${base}params_shard_3.bin (HTTP 404)`);
    expect(h.count('params_shard_3.bin')).toBe(1);
  });

  it('refuses before fetching any weights when the quota cannot hold them', async () => {
    const h = host();
    const caches = new FakeCaches();
    const error = (await downloadModel(MODEL, options(h, caches, { estimate: async () => ({ usage: 1000, quota: 1000 + SHARD }) })).catch(
      (e: unknown) => e,
    )) as ModelDownloadError;
    expect(error.kind).toBe('quota');
    expect(error.message).toMatch(/needs 0\.3 MB more.*only 0\.1 MB more.*Choose a smaller model/);
    expect(h.requests.filter((u) => u.endsWith('.bin'))).toEqual([]);
  });

  it('turns a full cache into the same quota message', async () => {
    const caches = new FakeCaches(3 * SHARD);
    const error = (await downloadModel(MODEL, options(host(), caches)).catch((e: unknown) => e)) as ModelDownloadError;
    expect(error.kind).toBe('quota');
    expect(error.message).toContain('delete models you no longer need');
  });

  it('says the device is offline when a file is missing and there is no network', async () => {
    const h = host();
    const error = (await downloadModel(MODEL, options(h, new FakeCaches(), { online: () => false })).catch((e: unknown) => e)) as ModelDownloadError;
    expect(error.kind).toBe('offline');
    expect(error.message).toMatch(/offline.*not downloaded yet/);
    expect(h.requests).toEqual([]);
  });

  it('says the device is offline when the browser claims to be online but no request is answered, not even by its own origin', async () => {
    const unanswered = (async () => Promise.reject(new TypeError('Failed to fetch'))) as typeof fetch;
    const probes: string[] = [];
    const reachable = async () => (probes.push('origin'), false);
    const error = (await downloadModel(MODEL, options(host(), new FakeCaches(), { fetch: unanswered, reachable })).catch(
      (e: unknown) => e,
    )) as ModelDownloadError;
    expect(error.kind).toBe('offline');
    expect(error.message).toMatch(/offline.*not downloaded yet/);
    expect(probes.length).toBeGreaterThan(0);
  });

  it('says the connection failed, not that the device is offline, when the origin answers and the model host does not', async () => {
    const unanswered = (async () => Promise.reject(new TypeError('Failed to fetch'))) as typeof fetch;
    const error = (await downloadModel(MODEL, options(host(), new FakeCaches(), { fetch: unanswered, reachable: async () => true })).catch(
      (e: unknown) => e,
    )) as ModelDownloadError;
    expect(error.kind).toBe('network');
    expect(error.message).toContain('The connection failed');
  });

  it('refuses a model URL that does not serve a model config, and caches nothing of it', async () => {
    const h = host((url) => (url.endsWith('mlc-chat-config.json') ? new Response('<html>Sign in</html>') : undefined));
    const caches = new FakeCaches();
    const error = (await downloadModel(MODEL, options(h, caches)).catch((e: unknown) => e)) as ModelDownloadError;
    expect(error.kind).toBe('invalid');
    expect(error.message).toContain('is not a model config');
    expect(caches.keys(CACHE_NAMES.config)).toEqual([]);
  });

  it('deletes by URL prefix (a download cut short before its index too, and received parts), keeping a shared library when asked', async () => {
    const caches = new FakeCaches();
    await downloadModel(MODEL, options(host(), caches));
    const other = `${MODEL.modelUrl.replace('Model-MLC', 'Other-MLC')}params_shard_0.bin`;
    await (await caches.open(CACHE_NAMES.model)).put(other, new Response('x'));
    await new PartStore(caches.asCacheStorage()).write(`${base}params_shard_9.bin`, 0, new Blob(['abc']), '"v1"');
    expect(await deleteModelFiles(MODEL, { caches: caches.asCacheStorage(), keepLib: true })).toBe(SHARDS + 4);
    expect(caches.keys(CACHE_NAMES.model)).toEqual([other]);
    expect(caches.keys(PARTS_CACHE)).toEqual([]);
    expect(caches.keys(CACHE_NAMES.config)).toEqual([]);
    expect(caches.keys(CACHE_NAMES.wasm)).toEqual([MODEL.libUrl]);
    await deleteModelFiles(MODEL, { caches: caches.asCacheStorage() });
    expect(caches.keys(CACHE_NAMES.wasm)).toEqual([]);
    expect(await modelCacheState(MODEL, { caches: caches.asCacheStorage() })).toEqual({ complete: false, partial: false, bytesCached: 0 });
  });

  it('keeps the received part of a shard when the download stops, and the next download (a new tab) asks only for the rest', async () => {
    const caches = new FakeCaches();
    const stop = new AbortController();
    const KEPT = 26_000;
    const first = host(
      (url, n) => {
        if (!url.endsWith('params_shard_1.bin') || n > 1) return undefined;
        // 40 % of the shard; once the app has taken it and asks for more, the person presses Stop while the host is still sending.
        let sent = false;
        return new Response(
          new ReadableStream(
            {
              pull(c) {
                if (!sent) {
                  sent = true;
                  c.enqueue(shard(1).slice(0, KEPT));
                  return;
                }
                stop.signal.addEventListener('abort', () => c.error(stop.signal.reason)); // as fetch's body does
                stop.abort(new DOMException('stopped', 'AbortError'));
              },
            },
            { highWaterMark: 0 },
          ),
          { headers: { 'Accept-Ranges': 'bytes' } },
        );
      },
      { ranges: true },
    );
    const error = await downloadModel(MODEL, options(first, caches, { concurrency: 1, signal: stop.signal })).catch((e: unknown) => e);
    expect((error as Error).name).toBe('AbortError');
    expect(caches.keys(PARTS_CACHE)).toEqual([`${base}params_shard_1.bin?memagent-part=0-${KEPT}`]);
    const state = await modelCacheState(MODEL, { caches: caches.asCacheStorage() });
    expect(state).toMatchObject({ complete: false, partial: true, bytesCached: SHARD + KEPT });

    const progress: DownloadProgress[] = [];
    const again = host(undefined, { ranges: true });
    const result = await downloadModel(MODEL, options(again, caches, { onProgress: (p) => progress.push(p) }));
    expect(again.ranges[again.requests.indexOf(`${base}params_shard_1.bin`)]).toBe(`bytes=${KEPT}-`);
    expect(result.bytesFetched).toBe(4 * SHARD - KEPT);
    expect(progress[0]!.bytesDone).toBe(SHARD + KEPT); // the bar starts where the last tab left it
    expect(progress.map((p) => p.fraction)).toEqual(progress.map((p) => p.fraction).sort((a, b) => a - b));
    expect(new Uint8Array(await (await (await caches.open(CACHE_NAMES.model)).match(`${base}params_shard_1.bin`))!.arrayBuffer())).toEqual(shard(1));
    expect(caches.keys(PARTS_CACHE)).toEqual([]);
  });

  it('clears the parts of a shard that a closed tab stored whole but had no time to clear', async () => {
    const caches = new FakeCaches();
    await downloadModel(MODEL, options(host(), caches));
    await new PartStore(caches.asCacheStorage()).write(`${base}params_shard_3.bin`, 0, new Blob([shard(3).slice(0, 1000)]), undefined);
    await (await caches.open(CACHE_NAMES.model)).delete(`${base}params_shard_4.bin`);
    const again = host();
    await downloadModel(MODEL, options(again, caches));
    expect(again.requests.filter((u) => u.endsWith('.bin'))).toEqual([`${base}params_shard_4.bin`]);
    expect(caches.keys(PARTS_CACHE)).toEqual([]);
  });

  it('moves the bar neither back nor past 100 % when a host that ignores ranges sends a shard again from its start', async () => {
    const h = host(
      (url, n, range) => {
        if (!url.endsWith('params_shard_0.bin')) return undefined;
        if (n === 1) return new Response(droppingBody(shard(0), SHARD / 2), { headers: { 'Accept-Ranges': 'bytes' } });
        return range ? new Response(shard(0)) : undefined; // the range is ignored: the whole file again
      },
      { ranges: true },
    );
    const progress: number[] = [];
    await downloadModel(MODEL, options(h, new FakeCaches(), { concurrency: 1, onProgress: (p) => progress.push(p.bytesDone) }));
    expect(progress).toEqual([...progress].sort((a, b) => a - b));
    expect(progress.at(-1)).toBe(SHARDS * SHARD);
  });

  it('says in the progress text when a busy host makes it wait', async () => {
    const h = host((url, n) =>
      url.endsWith('params_shard_2.bin') && n === 1 ? new Response('busy', { status: 503, headers: { 'Retry-After': '1' } }) : undefined,
    );
    const texts: string[] = [];
    await downloadModel(MODEL, options(h, new FakeCaches(), { concurrency: 1, onProgress: (p) => texts.push(p.text) }));
    expect(texts.some((t) => t.endsWith(' · The host is busy (HTTP 503): asking again for weights file params_shard_2.bin in 1 s'))).toBe(true);
    expect(texts.at(-1)).toBe('All files are downloaded');
  });

  it('stores an older conversion’s ndarray-cache.json under the tensor-cache.json key WebLLM reads', async () => {
    const h = host(undefined, { older: true });
    const caches = new FakeCaches();
    const texts: string[] = [];
    await downloadModel(MODEL, options(h, caches, { onProgress: (p) => texts.push(p.text) }));
    expect(h.requests.filter((u) => u.endsWith('-cache.json'))).toEqual([`${base}tensor-cache.json`, `${base}ndarray-cache.json`]);
    const stored = await (await caches.open(CACHE_NAMES.model)).match(`${base}${WEIGHTS_INDEX}`);
    expect(await stored!.text()).toBe(INDEX);
    expect(caches.keys(CACHE_NAMES.model)).not.toContain(`${base}ndarray-cache.json`);
    expect(texts).toContain(`Downloading weights: 0.0 MB of 0.3 MB (converted by an older MLC: its ndarray-cache.json is used as tensor-cache.json)`);
    expect((await modelCacheState(MODEL, { caches: caches.asCacheStorage() })).complete).toBe(true);
  });

  it('names both index files when a model has neither', async () => {
    const h = host((url) => (url.endsWith('-cache.json') ? new Response('Entry not found', { status: 404 }) : undefined));
    const error = (await downloadModel(MODEL, options(h, new FakeCaches())).catch((e: unknown) => e)) as ModelDownloadError;
    expect(error.kind).toBe('not-found');
    expect(error.message).toBe(
      `The model has no weights index: neither ${base}tensor-cache.json nor ${base}ndarray-cache.json was found. Check that the model URL points at a model converted for WebLLM (MLC).`,
    );
  });

  it('refuses a model library that is not WebAssembly (a sign-in page, say) before fetching weights', async () => {
    const h = host((url) => (url === MODEL.libUrl ? new Response('<html>Sign in</html>', { headers: { 'Content-Length': '20' } }) : undefined));
    const caches = new FakeCaches();
    const error = (await downloadModel(MODEL, options(h, caches)).catch((e: unknown) => e)) as ModelDownloadError;
    expect(error.kind).toBe('invalid');
    expect(error.message).toBe(`The file at ${MODEL.libUrl} is not a WebAssembly model library. Check the model library URL.`);
    expect(caches.keys(CACHE_NAMES.wasm)).toEqual([]);
    expect(h.count('.bin')).toBe(0);
  });

  it('knows the URLs WebLLM derives from a model URL', () => {
    expect(fileUrls(MODEL)).toEqual({
      config: `${base}mlc-chat-config.json`,
      tensorCache: `${base}tensor-cache.json`,
      tokenizer: `${base}tokenizer.json`,
    });
  });
});
