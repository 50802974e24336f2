import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CACHE_NAMES, downloadModel, type DownloadOptions } from '../src/engines/webllm/models/model-download';
import { PARTS_CACHE } from '../src/engines/webllm/models/model-parts';
import { CDN_PRESETS, cdnFiles } from './support/cdn-host';
import { BROKEN_LIBRARY, chatConfig, shardBytes, tokenizerJson, weightsIndex } from './support/model-files';
import { type ModelHost, SHARD_BYTES, SHARDS, startModelHost } from './support/model-host';
import { FakeCaches } from './support/fake-caches';

// The downloader over real HTTP (node's fetch, which follows redirects and decodes gzip as a browser does)
// against both test hosts: the polite one and the one that behaves like Hugging Face and its CDN.

let host: ModelHost;
let hub: string;

beforeAll(async () => {
  host = await startModelHost(0);
  hub = `http://127.0.0.1:${host.port}`;
});
afterAll(() => host.close());

async function cacheBytes(caches: FakeCaches, name: string, url: string): Promise<Buffer> {
  const hit = await (await caches.open(name)).match(url);
  if (!hit) throw new Error(`${url} is not in ${name}`);
  return Buffer.from(await hit.arrayBuffer());
}

const options = (caches: FakeCaches, extra: Partial<DownloadOptions> = {}): DownloadOptions => ({
  caches: caches.asCacheStorage(),
  estimate: async () => ({ usage: 0, quota: 1e12 }),
  online: () => true,
  ...extra,
});

describe('downloads over HTTP from the test hosts', () => {
  it('the polite host: every file arrives byte for byte', async () => {
    host.state.log = [];
    const caches = new FakeCaches();
    const base = `${hub}/m/good/resolve/main/`;
    const lib = `${hub}/lib/test.wasm`;
    const result = await downloadModel({ modelUrl: base, libUrl: lib }, options(caches));
    expect(result).toEqual({ bytesTotal: SHARDS * SHARD_BYTES, bytesFetched: SHARDS * SHARD_BYTES });
    // Buffer.equals: a deep equality over megabytes would take minutes.
    expect((await cacheBytes(caches, CACHE_NAMES.config, `${base}mlc-chat-config.json`)).equals(Buffer.from(JSON.stringify(chatConfig)))).toBe(true);
    expect((await cacheBytes(caches, CACHE_NAMES.model, `${base}tokenizer.json`)).equals(tokenizerJson())).toBe(true);
    expect(
      (await cacheBytes(caches, CACHE_NAMES.model, `${base}tensor-cache.json`)).equals(Buffer.from(JSON.stringify(weightsIndex(SHARDS, SHARD_BYTES)))),
    ).toBe(true);
    expect((await cacheBytes(caches, CACHE_NAMES.wasm, lib)).equals(BROKEN_LIBRARY)).toBe(true);
    for (let i = 0; i < SHARDS; i++)
      expect((await cacheBytes(caches, CACHE_NAMES.model, `${base}params_shard_${i}.bin`)).equals(shardBytes(i, SHARD_BYTES))).toBe(true);
  });

  it('the realistic host: compressed JSON, a chunked index, shards through a redirect to another origin, a drop resumed with Range, a 429 waited out, a stall dropped and resumed at a fresh signed URL', async () => {
    host.state.log = [];
    host.state.played.clear();
    const preset = CDN_PRESETS['cdn-quick']!;
    const files = cdnFiles(preset);
    const caches = new FakeCaches();
    const base = `${hub}/r/cdn-quick/resolve/main/`;
    const lib = `${hub}/r/cdn-quick/lib/test.wasm`;
    const texts: string[] = [];
    const fractions: number[] = [];
    const result = await downloadModel(
      { modelUrl: base, libUrl: lib },
      options(caches, { stallMs: 1000, onProgress: (p) => (texts.push(p.text), fractions.push(p.fraction)) }),
    );
    const total = preset.shards * preset.shardBytes;
    expect(result).toEqual({ bytesTotal: total, bytesFetched: total }); // not a byte fetched twice

    // Byte for byte what the host served, decoded.
    for (const [file, body] of files) {
      const stored =
        file === 'lib.wasm'
          ? await cacheBytes(caches, CACHE_NAMES.wasm, lib)
          : await cacheBytes(caches, file === 'mlc-chat-config.json' ? CACHE_NAMES.config : CACHE_NAMES.model, `${base}${file}`);
      expect(stored.equals(body), file).toBe(true);
    }
    expect(caches.keys(PARTS_CACHE)).toEqual([]);

    const log = host.state.log;
    // Compressed on the wire: fewer bytes served than stored.
    expect(log.find((e) => e.path.endsWith('/tokenizer.json'))!.served).toBeLessThan(tokenizerJson().length / 2);
    for (let i = 0; i < preset.shards; i++) {
      const served = log.filter((e) => e.host === 'cdn' && e.path.endsWith(`/params_shard_${i}.bin`) && e.served > 0);
      const starts = served.map((e) => e.rangeStart ?? 0);
      expect(new Set(starts).size, `shard ${i}`).toBe(starts.length); // no range asked for twice
      expect(
        served.reduce((n, e) => n + e.served, 0),
        `shard ${i}`,
      ).toBe(preset.shardBytes);
    }
    const shard = (i: number) =>
      log.filter((e) => e.path.endsWith(`/params_shard_${i}.bin`)).map((e) => `${e.host} ${e.status}${e.rangeStart ? ` from ${e.rangeStart}` : ''}`);
    // Dropped at 60 %: the rest asked for with Range, straight from the CDN while its signed URL held.
    expect(shard(0)).toEqual(['hub 302', 'cdn 200', `cdn 206 from ${Math.floor(0.6 * preset.shardBytes)}`]);
    expect(shard(1)).toEqual(['hub 429', 'hub 302', 'cdn 200']);
    // Stalled at 30 % past the signature's life: the CDN refuses the old URL, the hub hands out a new one.
    expect(shard(2)).toEqual(['hub 302', 'cdn 200', 'cdn 403', 'hub 302', `cdn 206 from ${Math.floor(0.3 * preset.shardBytes)}`]);
    expect(texts).toContainEqual(expect.stringContaining('The host is busy (HTTP 429): asking again for weights file params_shard_1.bin in 1 s'));
    expect(texts).toContainEqual(expect.stringContaining('No data for 1 s for weights file params_shard_2.bin: asking again'));
    expect(fractions).toEqual([...fractions].sort((a, b) => a - b));
    expect(fractions.at(-1)).toBe(1);
  });
});
