import { describe, expect, it, vi } from 'vitest';
import { fetchFile, type FetchOptions, ModelDownloadError, parseContentRange } from '../src/engines/webllm/models/model-fetch';
import { PARTS_CACHE, PartStore } from '../src/engines/webllm/models/model-parts';
import { droppingBody, FakeCaches } from './support/fake-caches';

const URL_A = 'https://hub.example/org/M/resolve/main/params_shard_0.bin';
const CDN = 'https://cdn.example/blobs/abc?Expires=1&Signature=x';
const SIZE = 100_000;

function file(seed = 1, size = SIZE): Uint8Array {
  return Uint8Array.from({ length: size }, (_, i) => (i * 31 + seed) & 0xff);
}

interface Seen {
  url: string;
  range: string | null;
}

/** A response as fetch gives it after following a redirect (url and redirected cannot be set otherwise). */
function redirected(res: Response, url: string): Response {
  Object.defineProperty(res, 'redirected', { value: true });
  Object.defineProperty(res, 'url', { value: url });
  return res;
}

/** A body that sends `bytes`, then nothing at all until the request is aborted. */
function stallingBody(bytes: Uint8Array, signal: AbortSignal | null | undefined): ReadableStream<Uint8Array> {
  return new ReadableStream({
    start(c) {
      if (bytes.length) c.enqueue(bytes);
      signal?.addEventListener('abort', () => c.error(signal.reason));
    },
  });
}

type Answer = (seen: Seen, n: number, init: RequestInit | undefined) => Response | undefined;

/**
 * A host for one file that takes byte ranges (206 with Content-Range, ETag),
 * unless `answer` says otherwise for the n-th request (1-based).
 */
function rangedHost(body: Uint8Array, answer: Answer = () => undefined, etag = '"v1"') {
  const seen: Seen[] = [];
  const fetch = (async (input: RequestInfo | URL, init?: RequestInit) => {
    const s = { url: String(input), range: new Headers(init?.headers).get('range') };
    seen.push(s);
    const own = answer(s, seen.length, init);
    if (own) return own;
    const m = /^bytes=(\d+)-$/.exec(s.range ?? '');
    const headers = { 'Accept-Ranges': 'bytes', ETag: etag };
    if (!m) return new Response(body.slice(), { headers });
    const start = Number(m[1]);
    return new Response(body.slice(start), {
      status: 206,
      headers: { ...headers, 'Content-Range': `bytes ${start}-${body.length - 1}/${body.length}`, 'Content-Length': String(body.length - start) },
    });
  }) as typeof globalThis.fetch;
  return { fetch, seen };
}

const quick: FetchOptions = { retryDelayMs: 1, online: () => true };

async function bytesOf(blob: Blob): Promise<Uint8Array> {
  return new Uint8Array(await blob.arrayBuffer());
}

describe('fetching one model file from a real host', () => {
  it('accepts a compressed text file whose Content-Length is smaller than the bytes that arrive', async () => {
    const json = JSON.stringify({ model: { type: 'BPE' }, pad: 'x'.repeat(5000) });
    const fetch = (async () => new Response(json, { headers: { 'Content-Length': '812', 'Content-Type': 'application/json' } })) as typeof globalThis.fetch;
    const blob = await fetchFile({ url: URL_A, what: 'the tokenizer', whole: () => false }, { ...quick, fetch });
    expect(await blob.text()).toBe(json);
  });

  it('accepts a tiny compressed file shorter than its Content-Length when it proves itself whole, and retries one that does not', async () => {
    const json = '{"a":1}';
    let calls = 0;
    const fetch = (async () => {
      calls++;
      // gzip makes a 7-byte file longer: 27 bytes on the wire; the second answer is cut short.
      return new Response(calls === 1 ? json.slice(0, 5) : json, { headers: { 'Content-Length': '27' } });
    }) as typeof globalThis.fetch;
    const whole = (b: Uint8Array) => {
      try {
        JSON.parse(new TextDecoder().decode(b));
        return true;
      } catch {
        return false;
      }
    };
    expect(await (await fetchFile({ url: URL_A, what: 'the config', whole }, { ...quick, fetch })).text()).toBe(json);
    expect(calls).toBe(2);
  });

  it('never trusts Content-Length for a shard: the size the weights index lists decides', async () => {
    const body = file();
    const fetch = (async () => new Response(body.slice(), { headers: { 'Content-Length': '12' } })) as typeof globalThis.fetch;
    expect(await bytesOf(await fetchFile({ url: URL_A, what: 'shard', size: SIZE }, { ...quick, fetch }))).toEqual(body);
  });

  it('resumes a dropped shard with Range from the byte it reached, checking 206 and Content-Range', async () => {
    const body = file();
    const host = rangedHost(body, (_, n) =>
      n === 1 ? new Response(droppingBody(body, 60_000), { headers: { 'Accept-Ranges': 'bytes', ETag: '"v1"' } }) : undefined,
    );
    const held: number[] = [];
    const blob = await fetchFile(
      { url: URL_A, what: 'shard', size: SIZE, parts: new PartStore(new FakeCaches().asCacheStorage()) },
      { ...quick, fetch: host.fetch },
      (h) => held.push(h),
    );
    expect(await bytesOf(blob)).toEqual(body);
    expect(host.seen.map((s) => s.range)).toEqual([null, 'bytes=60000-']);
    expect(held).toEqual([...held].sort((a, b) => a - b)); // never back
    expect(held.at(-1)).toBe(SIZE);
  });

  it('starts over when the host ignores the range, or the file changed (another ETag), or the range is not the one asked for', async () => {
    const body = file();
    const cases: Record<string, Answer> = {
      ignored: (s) => (s.range ? new Response(body.slice(), { headers: { 'Accept-Ranges': 'bytes', ETag: '"v1"' } }) : undefined),
      changed: (s) =>
        s.range ? new Response(body.slice(60_000), { status: 206, headers: { ETag: '"v2"', 'Content-Range': `bytes 60000-${SIZE - 1}/${SIZE}` } }) : undefined,
      elsewhere: (s) =>
        s.range ? new Response(body.slice(50_000), { status: 206, headers: { ETag: '"v1"', 'Content-Range': `bytes 50000-${SIZE - 1}/${SIZE}` } }) : undefined,
    };
    for (const [name, later] of Object.entries(cases)) {
      let dropped = false;
      const host = rangedHost(body, (s, n, init) => {
        if (!dropped) return ((dropped = true), new Response(droppingBody(body, 60_000), { headers: { 'Accept-Ranges': 'bytes', ETag: '"v1"' } }));
        return n === 2 ? later(s, n, init) : undefined;
      });
      const caches = new FakeCaches();
      const blob = await fetchFile({ url: URL_A, what: 'shard', size: SIZE, parts: new PartStore(caches.asCacheStorage()) }, { ...quick, fetch: host.fetch });
      expect(await bytesOf(blob), name).toEqual(body);
      expect(host.seen.at(-1)!.range, name).toBe(name === 'ignored' ? 'bytes=60000-' : null);
      expect(caches.keys(PARTS_CACHE), name).toEqual([]);
    }
  });

  it('sends ranged retries straight to the CDN a redirect led to, and back to the original URL once that signed URL has expired', async () => {
    const body = file();
    const host = rangedHost(body, (s, n) => {
      if (n === 1) return redirected(new Response(droppingBody(body, 30_000), { headers: { 'Accept-Ranges': 'bytes', ETag: '"v1"' } }), CDN);
      if (n === 2)
        return new Response(droppingBody(body.slice(30_000), 30_000), {
          status: 206,
          headers: { 'Content-Range': `bytes 30000-${SIZE - 1}/${SIZE}`, ETag: '"v1"' },
        });
      if (n === 3) return new Response('<Error><Code>AccessDenied</Code></Error>', { status: 403 });
      return undefined;
    });
    const blob = await fetchFile(
      { url: URL_A, what: 'shard', size: SIZE, parts: new PartStore(new FakeCaches().asCacheStorage()) },
      { ...quick, fetch: host.fetch },
    );
    expect(await bytesOf(blob)).toEqual(body);
    expect(host.seen).toEqual([
      { url: URL_A, range: null },
      { url: CDN, range: 'bytes=30000-' },
      { url: CDN, range: 'bytes=60000-' },
      { url: URL_A, range: 'bytes=60000-' },
    ]);
  });

  it('a 403 from the original URL is an error at once, not an expired link', async () => {
    const fetch = (async () => new Response('denied', { status: 403 })) as typeof globalThis.fetch;
    const error = (await fetchFile({ url: URL_A, what: 'weights file params_shard_0.bin', size: SIZE }, { ...quick, fetch }).catch(
      (e: unknown) => e,
    )) as ModelDownloadError;
    expect(error.kind).toBe('not-found');
    expect(error.message).toContain('HTTP 403');
  });

  it('waits out Retry-After on 429, and says so while it waits', async () => {
    const body = file();
    const host = rangedHost(body, (_, n) => (n === 1 ? new Response('busy', { status: 429, headers: { 'Retry-After': '1' } }) : undefined));
    const notices: (string | null)[] = [];
    const t0 = Date.now();
    await fetchFile({ url: URL_A, what: 'weights file params_shard_0.bin', size: SIZE }, { ...quick, fetch: host.fetch, onNotice: (_, t) => notices.push(t) });
    expect(Date.now() - t0).toBeGreaterThanOrEqual(990);
    expect(notices).toEqual(['The host is busy (HTTP 429): asking again for weights file params_shard_0.bin in 1 s', null]);
  });

  it('ends at once, saying so, when a busy host asks for a longer wait than is sensible', async () => {
    const fetch = (async () => new Response('busy', { status: 503, headers: { 'Retry-After': '3600' } })) as typeof globalThis.fetch;
    const error = (await fetchFile({ url: URL_A, what: 'weights file params_shard_0.bin', size: SIZE }, { ...quick, fetch }).catch(
      (e: unknown) => e,
    )) as ModelDownloadError;
    expect(error.kind).toBe('network');
    expect(error.message).toMatch(/is busy \(HTTP 503\) and asks to wait 60 minutes.*press Download again later to resume/);
  });

  it('reads a Content-Range header', () => {
    expect(parseContentRange('bytes 5-9/10')).toEqual({ first: 5, last: 9, total: 10 });
    expect(parseContentRange('bytes 5-9/*')).toEqual({ first: 5, last: 9, total: undefined });
    expect(parseContentRange('bytes */10')).toBeUndefined();
  });

  it('drops a connection that brings no bytes for the stall time and resumes after the bytes it had', async () => {
    const body = file();
    const host = rangedHost(body, (_, n, init) =>
      n === 1 ? new Response(stallingBody(body.slice(0, 25_000), init?.signal), { headers: { 'Accept-Ranges': 'bytes' } }) : undefined,
    );
    const notices: (string | null)[] = [];
    const blob = await fetchFile(
      { url: URL_A, what: 'weights file params_shard_0.bin', size: SIZE, parts: new PartStore(new FakeCaches().asCacheStorage()) },
      { ...quick, fetch: host.fetch, stallMs: 100, onNotice: (_, t) => notices.push(t) },
    );
    expect(await bytesOf(blob)).toEqual(body);
    expect(host.seen.map((s) => s.range)).toEqual([null, 'bytes=25000-']);
    expect(notices[0]).toBe('No data for 0.1 s for weights file params_shard_0.bin: asking again');
  });

  it('after the retries, says what happened and that Download resumes, keeping the bytes received', async () => {
    const body = file();
    const host = rangedHost(body, (s, n, init) =>
      n === 1
        ? new Response(stallingBody(body.slice(0, 10_000), init?.signal), { headers: { 'Accept-Ranges': 'bytes' } })
        : new Response(stallingBody(new Uint8Array(), init?.signal), { status: 206, headers: { 'Content-Range': `bytes 10000-${SIZE - 1}/${SIZE}` } }),
    );
    const caches = new FakeCaches();
    const error = (await fetchFile(
      { url: URL_A, what: 'weights file params_shard_0.bin', size: SIZE, parts: new PartStore(caches.asCacheStorage()) },
      { ...quick, fetch: host.fetch, stallMs: 100, retries: 2 },
    ).catch((e: unknown) => e)) as ModelDownloadError;
    expect(error.kind).toBe('network');
    expect(error.message).toBe(
      'The connection failed while downloading weights file params_shard_0.bin (no data for 0.1 s; tried 4 times). Every file finished so far is kept, and the 0.0 MB of this file received so far: check the network and press Download again to resume.',
    );
    expect(host.seen.map((s) => s.range)).toEqual([null, 'bytes=10000-', 'bytes=10000-', 'bytes=10000-']);
    expect((await new PartStore(caches.asCacheStorage()).read(URL_A)).bytes).toBe(10_000);
  });

  it('stores bytes held longer than keepEveryMs as a part while the body still streams, so a closed tab loses no more', async () => {
    // The clock the keeping reads moves only here: 40 ms between pieces, however fast this machine consumes them.
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      const body = file();
      const caches = new FakeCaches();
      const parts = new PartStore(caches.asCacheStorage());
      const stop = new AbortController();
      let silent!: () => void;
      const allSent = new Promise<void>((resolve) => (silent = resolve));
      const fetch = (async (_: unknown, init?: RequestInit) => {
        let at = 0;
        return new Response(
          new ReadableStream<Uint8Array>(
            {
              // Asked for a piece only once the last one was taken: each arrives 40 ms of clock after it.
              pull(c) {
                if (at >= 50_000) {
                  silent(); // all 50,000 bytes taken, and the body silent
                  return new Promise<void>((resolve) => init?.signal?.addEventListener('abort', () => resolve(c.error(init.signal!.reason))));
                }
                if (at > 0) vi.setSystemTime(Date.now() + 40);
                c.enqueue(body.slice(at, at + 10_000));
                at += 10_000;
              },
            },
            { highWaterMark: 0 },
          ),
          { headers: { 'Accept-Ranges': 'bytes', ETag: '"v1"' } },
        );
      }) as typeof globalThis.fetch;
      const running = fetchFile({ url: URL_A, what: 'shard', size: SIZE, parts }, { ...quick, fetch, keepEveryMs: 30, signal: stop.signal }).catch(
        () => undefined,
      );
      await allSent;
      // What a tab closed now would leave: the second and fourth pieces came 40 ms after the ones before them,
      // so four pieces are stored and only the last one, held for no time yet, would be lost.
      const stored = await parts.read(URL_A);
      expect(stored.bytes).toBe(40_000);
      expect(stored.validator).toBe('"v1"');
      expect(new Uint8Array(await new Blob(stored.pieces).arrayBuffer())).toEqual(body.slice(0, stored.bytes));
      stop.abort();
      await running;
      expect((await parts.read(URL_A)).bytes).toBe(50_000); // a stop stores what was held
    } finally {
      vi.useRealTimers();
    }
  });

  it('finishes a shard whose every byte was stored as parts without asking the host again', async () => {
    const body = file();
    const caches = new FakeCaches();
    const parts = new PartStore(caches.asCacheStorage());
    await parts.write(URL_A, 0, new Blob([body.slice(0, 70_000)]), '"v1"');
    await parts.write(URL_A, 70_000, new Blob([body.slice(70_000)]), '"v1"');
    const host = rangedHost(body);
    expect(await bytesOf(await fetchFile({ url: URL_A, what: 'shard', size: SIZE, parts }, { ...quick, fetch: host.fetch }))).toEqual(body);
    expect(host.seen).toEqual([]);
  });

  it('throws away bytes past the size the index lists and starts over', async () => {
    const body = file();
    const host = rangedHost(body, (_, n) => (n === 1 ? new Response(new Uint8Array(SIZE + 10), { headers: { 'Accept-Ranges': 'bytes' } }) : undefined));
    const caches = new FakeCaches();
    const blob = await fetchFile({ url: URL_A, what: 'shard', size: SIZE, parts: new PartStore(caches.asCacheStorage()) }, { ...quick, fetch: host.fetch });
    expect(await bytesOf(blob)).toEqual(body);
    expect(host.seen.map((s) => s.range)).toEqual([null, null]);
  });
});
