import { createHash, createHmac, randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { gzipSync } from 'node:zlib';
import { BROKEN_LIBRARY, chatConfig, shardBytes, shardName, tokenizerJson, weightsIndex } from './model-files';

/**
 * A model host that behaves like Hugging Face and its CDN rather than politely:
 *
 * - the hub (`/r/<preset>/resolve/main/<file>`) compresses JSON and the model
 *   library whenever the request accepts gzip, with the compressed
 *   Content-Length and no Content-Encoding exposed to other origins; sends the
 *   weights index chunked, without a length; answers each shard with a 302 to
 *   the CDN on the other loopback name (127.0.0.1 ⇄ localhost: another origin),
 *   at a URL signed to expire after `ttlMs` (403 afterwards, as S3 does);
 * - the CDN (`/cdn/<preset>/<file>`) takes byte ranges (206 with
 *   Content-Range; 416 past the end), sends ETag and Last-Modified, sends a
 *   whole file chunked without a Content-Length, and throttles each
 *   connection to `bytesPerSecond`;
 * - faults, each the first time only until POST /__reset: a shard whose
 *   connection drops at 60 % (`dropOnce`), a shard the hub answers 429 with
 *   Retry-After: 1 (`busyOnce`), a shard whose connection stalls after 30 %
 *   and stays open without a byte (`stallOnce`).
 */

export interface CdnPreset {
  shards: number;
  shardBytes: number;
  /** Whether the CDN takes byte ranges (and says so). */
  ranges: boolean;
  bytesPerSecond: number;
  ttlMs: number;
  dropOnce: number[] | 'all';
  busyOnce: number[];
  stallOnce: number[];
}

const MiB = 1024 * 1024;

export const CDN_PRESETS: Record<string, CdnPreset> = {
  // The browser test: slow enough to reload mid-way, signatures outliving a drop's resume but not a stall's.
  cdn: { shards: 8, shardBytes: 2 * MiB, ranges: true, bytesPerSecond: MiB, ttlMs: 3000, dropOnce: [0], busyOnce: [1], stallOnce: [2] },
  // The same faults, small and quick, for tests in node.
  'cdn-quick': { shards: 6, shardBytes: 256 * 1024, ranges: true, bytesPerSecond: 2 * MiB, ttlMs: 800, dropOnce: [0], busyOnce: [1], stallOnce: [2] },
};

export interface LogEntry {
  method: string;
  /** Which face of the host answered: the hub (the model URL's origin) or the CDN. */
  host: 'hub' | 'cdn';
  path: string;
  status: number;
  /** The first byte asked for with Range, where one was. */
  rangeStart?: number;
  /** Body bytes written to the connection. */
  served: number;
  /** How the body ended: sent whole, dropped or stalled by the host's fault, or closed by the client first. */
  ended?: 'whole' | 'dropped' | 'stalled' | 'client';
}

export interface CdnState {
  log: LogEntry[];
  /** Faults already played, as `<preset>/<kind>/<shard>`. */
  played: Set<string>;
}

const SECRET = randomBytes(16);
const LAST_MODIFIED = 'Tue, 01 Dec 2026 00:00:00 GMT';

function sign(path: string, expires: number): string {
  return createHmac('sha256', SECRET).update(`${path}\n${expires}`).digest('hex');
}

const made = new WeakMap<CdnPreset, Map<string, Buffer>>();

/** Every file of a preset as the hub and CDN send it before any compression. */
export function cdnFiles(preset: CdnPreset): Map<string, Buffer> {
  const known = made.get(preset);
  if (known) return known;
  const files = new Map<string, Buffer>([
    ['mlc-chat-config.json', Buffer.from(JSON.stringify(chatConfig))],
    ['tokenizer.json', tokenizerJson()],
    ['tensor-cache.json', Buffer.from(JSON.stringify(weightsIndex(preset.shards, preset.shardBytes)))],
    ['lib.wasm', BROKEN_LIBRARY],
  ]);
  for (let i = 0; i < preset.shards; i++) files.set(shardName(i), shardBytes(i, preset.shardBytes));
  made.set(preset, files);
  return files;
}

const compressed = new WeakMap<Buffer, Buffer>();
function gzipped(body: Buffer): Buffer {
  let gz = compressed.get(body);
  if (!gz) compressed.set(body, (gz = gzipSync(body)));
  return gz;
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/**
 * Writes `body[start..)` at `bytesPerSecond`; drops the connection once byte
 * `dropAt` is out, or goes silent at `stallAt` until the client gives up.
 */
async function send(
  res: ServerResponse,
  body: Buffer,
  start: number,
  bytesPerSecond: number,
  entry: LogEntry,
  fault: { dropAt?: number; stallAt?: number } = {},
): Promise<void> {
  let closed = false;
  const gone = new Promise<void>((r) => res.on('close', () => ((closed = true), r())));
  const slice = 32 * 1024;
  const t0 = Date.now();
  for (let at = start; at < body.length && !closed;) {
    if (fault.stallAt !== undefined && at >= fault.stallAt) {
      entry.ended = 'stalled';
      await Promise.race([gone, sleep(120_000)]);
      res.destroy();
      return;
    }
    const end = Math.min(body.length, at + slice, fault.dropAt ?? Infinity, fault.stallAt ?? Infinity);
    const chunk = body.subarray(at, end);
    await Promise.race([new Promise<void>((r) => res.write(chunk, () => r())), gone]);
    entry.served += chunk.length;
    at = end;
    if (fault.dropAt !== undefined && at >= fault.dropAt) {
      entry.ended = 'dropped';
      res.socket?.destroy(); // the connection drops mid-body
      return;
    }
    const due = t0 + ((at - start) / bytesPerSecond) * 1000 - Date.now();
    if (due > 0) await Promise.race([gone, sleep(due)]);
  }
  entry.ended = closed ? 'client' : 'whole';
  if (!closed) res.end();
}

function cors(res: ServerResponse, expose: string[]): void {
  res.setHeader('Access-Control-Allow-Origin', '*');
  if (expose.length) res.setHeader('Access-Control-Expose-Headers', expose.join(', '));
}

/**
 * Answers the hub and CDN paths (undefined for any other path). `entry` is
 * this request's line in the log; the answer's status is returned.
 */
export async function handleCdn(
  req: IncomingMessage,
  res: ServerResponse,
  state: CdnState,
  entry: LogEntry,
  presets: Record<string, CdnPreset> = CDN_PRESETS,
): Promise<number | undefined> {
  const url = new URL(req.url ?? '/', 'http://host');
  const hub = /^\/r\/([\w-]+)\/(?:resolve\/main\/(.+)|lib\/[\w.-]+\.wasm)$/.exec(url.pathname);
  const cdn = /^\/cdn\/([\w-]+)\/(.+)$/.exec(url.pathname);
  const name = hub?.[1] ?? cdn?.[1];
  const preset = name ? presets[name] : undefined;
  if (!name || !preset) return undefined;
  entry.host = cdn ? 'cdn' : 'hub';
  if (req.method === 'OPTIONS') {
    res.writeHead(204, {
      'Access-Control-Allow-Origin': '*',
      'Access-Control-Allow-Methods': 'GET, HEAD',
      'Access-Control-Allow-Headers': 'Range',
      'Access-Control-Max-Age': '600',
    });
    res.end();
    return 204;
  }
  const files = cdnFiles(preset);
  const once = (kind: string, i: number, list: number[] | 'all') => {
    const key = `${name}/${kind}/${i}`;
    if (!(list === 'all' || list.includes(i)) || state.played.has(key)) return false;
    state.played.add(key);
    return true;
  };

  if (hub) {
    cors(res, []);
    const file = hub[2] ?? 'lib.wasm';
    const body = files.get(file);
    if (!body) return (res.writeHead(404, { 'Content-Type': 'text/plain' }).end('Entry not found'), 404);
    const shard = /^params_shard_(\d+)\.bin$/.exec(file);
    if (shard) {
      const i = Number(shard[1]);
      if (once('busy', i, preset.busyOnce)) {
        cors(res, ['Retry-After']);
        return (res.writeHead(429, { 'Retry-After': '1', 'Content-Type': 'text/plain' }).end('Too Many Requests'), 429);
      }
      const host = req.headers.host ?? '127.0.0.1';
      const other = host.startsWith('localhost') ? host.replace('localhost', '127.0.0.1') : host.replace('127.0.0.1', 'localhost');
      const path = `/cdn/${name}/${file}`;
      const expires = Date.now() + preset.ttlMs;
      const location = `http://${other}${path}?Expires=${expires}&Signature=${sign(path, expires)}`;
      return (res.writeHead(302, { Location: location, 'Content-Type': 'text/plain' }).end(`Found. Redirecting to ${location}`), 302);
    }
    if (file === 'tensor-cache.json') {
      // Chunked, no Content-Length: the size is unknown until the body ends.
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.write(body.subarray(0, body.length >> 1));
      await sleep(20);
      res.end(body.subarray(body.length >> 1));
      entry.served = body.length;
      return 200;
    }
    const type = file.endsWith('.wasm') ? 'application/wasm' : 'application/json';
    if (/\bgzip\b/.test(String(req.headers['accept-encoding'] ?? ''))) {
      const gz = gzipped(body);
      res.writeHead(200, { 'Content-Type': type, 'Content-Encoding': 'gzip', 'Content-Length': String(gz.length), Vary: 'Accept-Encoding' });
      res.end(gz);
      entry.served = gz.length;
      return 200;
    }
    res.writeHead(200, { 'Content-Type': type, 'Content-Length': String(body.length) }).end(body);
    entry.served = body.length;
    return 200;
  }

  // The CDN.
  cors(res, ['Accept-Ranges', 'Content-Range', 'Content-Length', 'ETag', 'Last-Modified']);
  const file = cdn![2]!;
  const path = `/cdn/${name}/${file}`;
  const expires = Number(url.searchParams.get('Expires'));
  const signature = url.searchParams.get('Signature') ?? '';
  if (signature !== sign(path, expires) || Date.now() > expires) {
    res.writeHead(403, { 'Content-Type': 'application/xml' });
    res.end('<?xml version="1.0" encoding="UTF-8"?><Error><Code>AccessDenied</Code><Message>Request has expired</Message></Error>');
    return 403;
  }
  const body = files.get(file);
  const i = Number(/^params_shard_(\d+)\.bin$/.exec(file)?.[1] ?? NaN);
  if (!body || Number.isNaN(i)) return (res.writeHead(404).end(), 404);
  const headers: Record<string, string> = {
    'Content-Type': 'application/octet-stream',
    ETag: `"${createHash('sha1').update(body).digest('hex')}"`,
    'Last-Modified': LAST_MODIFIED,
  };
  if (preset.ranges) headers['Accept-Ranges'] = 'bytes';
  const range = preset.ranges ? /^bytes=(\d+)-(\d*)$/.exec(String(req.headers.range ?? '')) : null;
  let start = 0;
  let end = body.length;
  let status = 200;
  if (range) {
    start = Number(range[1]);
    entry.rangeStart = start;
    end = range[2] ? Math.min(Number(range[2]) + 1, body.length) : body.length;
    if (start >= end) {
      res.writeHead(416, { ...headers, 'Content-Range': `bytes */${body.length}` }).end();
      return 416;
    }
    status = 206;
    headers['Content-Range'] = `bytes ${start}-${end - 1}/${body.length}`;
    headers['Content-Length'] = String(end - start);
  }
  entry.status = status; // known now, while the body is still going out
  res.writeHead(status, headers); // a whole file goes out chunked, as CDNs often send it
  const fault: { dropAt?: number; stallAt?: number } = {};
  if (once('drop', i, preset.dropOnce)) fault.dropAt = Math.max(start + 1, Math.floor(body.length * 0.6));
  else if (once('stall', i, preset.stallOnce)) fault.stallAt = Math.max(start, Math.floor(body.length * 0.3));
  await send(res, body.subarray(0, end), start, preset.bytesPerSecond, entry, fault);
  return status;
}

/** Makes every file of the presets, compressed too, so that no first request waits on it. */
export function prepareCdn(presets: Record<string, CdnPreset>): void {
  for (const preset of Object.values(presets)) for (const [file, body] of cdnFiles(preset)) if (!file.endsWith('.bin')) gzipped(body);
}

/** SHA-256 of every file of a preset, as served before compression, by file name. */
export function cdnDigests(preset: CdnPreset): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [file, body] of cdnFiles(preset)) out[file] = createHash('sha256').update(body).digest('hex');
  return out;
}
