/**
 * Cache Storage on a folder, for WebLLM and the app's downloader outside a
 * browser. It keeps the browser's contract as far as they use it: caches by
 * name, entries keyed by URL, `match` / `put` / `add` / `keys` / `delete`.
 * An entry is two files named by the SHA-256 of its URL: the body, and a
 * small JSON of its URL and headers written last, so that an entry exists
 * only once its body is whole; a process stopped mid-write leaves only a
 * temporary file, which the next open removes.
 */
import { createHash } from 'node:crypto';
import {
  createWriteStream,
  mkdirSync,
  openAsBlob,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statfsSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as NodeReadableStream } from 'node:stream/web';

interface EntryHead {
  url: string;
  headers: [string, string][];
  size: number;
}

const HEAD = '.json';
const BODY = '.body';
const TMP = '.tmp-';

function urlOf(r: RequestInfo | URL): string {
  return typeof r === 'string' ? new URL(r).href : r instanceof URL ? r.href : r.url;
}

function keyOf(url: string): string {
  return createHash('sha256').update(url).digest('hex');
}

/** A temporary file's writer, if that process is gone: its file is left over from a stop. */
function orphaned(name: string): boolean {
  const pid = Number(/\.tmp-(\d+)-/.exec(name)?.[1] ?? NaN);
  if (!Number.isInteger(pid)) return true;
  if (pid === process.pid) return false;
  try {
    process.kill(pid, 0);
    return false;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

let serial = 0;

/** One named cache: a folder of entries. */
export class FileCache {
  constructor(readonly dir: string) {
    mkdirSync(dir, { recursive: true });
    for (const name of readdirSync(dir)) if (name.includes(TMP) && orphaned(name)) rmSync(join(dir, name), { force: true });
  }

  private head(url: string): EntryHead | undefined {
    try {
      return JSON.parse(readFileSync(join(this.dir, keyOf(url) + HEAD), 'utf8')) as EntryHead;
    } catch {
      return undefined;
    }
  }

  async match(request: RequestInfo | URL): Promise<Response | undefined> {
    const url = urlOf(request);
    const head = this.head(url);
    if (!head || head.url !== url) return undefined;
    let body: Blob;
    try {
      body = await openAsBlob(join(this.dir, keyOf(url) + BODY));
    } catch {
      return undefined; // deleted between the two reads
    }
    return new Response(body, { status: 200, headers: head.headers });
  }

  async put(request: RequestInfo | URL, response: Response): Promise<void> {
    const url = urlOf(request);
    const key = keyOf(url);
    const tmp = `${TMP}${process.pid}-${++serial}`;
    const bodyTmp = join(this.dir, key + BODY + tmp);
    const headTmp = join(this.dir, key + HEAD + tmp);
    try {
      // Opened here, not by the stream: a stream opens its file later, which could be after a failed put removed it.
      const out = createWriteStream(bodyTmp, { fd: openSync(bodyTmp, 'w') });
      if (response.body) await pipeline(Readable.fromWeb(response.body as NodeReadableStream<Uint8Array>), out);
      else await new Promise<void>((resolve, reject) => out.end((e?: Error | null) => (e ? reject(e) : resolve())));
      const size = statSync(bodyTmp).size;
      const headers = [...response.headers].filter(([name]) => name.toLowerCase() !== 'content-length');
      headers.push(['content-length', String(size)]);
      writeFileSync(headTmp, JSON.stringify({ url, headers, size } satisfies EntryHead));
      // The body first: an entry is there once its head is.
      renameSync(bodyTmp, join(this.dir, key + BODY));
      renameSync(headTmp, join(this.dir, key + HEAD));
    } catch (e) {
      rmSync(bodyTmp, { force: true });
      rmSync(headTmp, { force: true });
      if ((e as NodeJS.ErrnoException).code === 'ENOSPC') throw new DOMException('There is no space left on the disk.', 'QuotaExceededError');
      throw e;
    }
  }

  /** Fetches `request` and stores the answer, as Cache.add does; a failed answer stores nothing. */
  async add(request: RequestInfo | URL): Promise<void> {
    const response = await fetch(request);
    if (!response.ok) throw new TypeError(`Cannot add ${urlOf(request)} to the cache: HTTP ${response.status}.`);
    await this.put(request, response);
  }

  async keys(): Promise<Request[]> {
    const out: Request[] = [];
    for (const name of readdirSync(this.dir)) {
      if (!name.endsWith(HEAD)) continue;
      try {
        out.push(new Request((JSON.parse(readFileSync(join(this.dir, name), 'utf8')) as EntryHead).url));
      } catch {
        // removed while listing
      }
    }
    return out;
  }

  async delete(request: RequestInfo | URL): Promise<boolean> {
    const key = keyOf(urlOf(request));
    const had = this.head(urlOf(request)) !== undefined;
    rmSync(join(this.dir, key + HEAD), { force: true });
    rmSync(join(this.dir, key + BODY), { force: true });
    return had;
  }

  /** Bytes of every entry's body. */
  bytes(): number {
    let n = 0;
    for (const name of readdirSync(this.dir)) if (name.endsWith(BODY)) n += statSync(join(this.dir, name)).size;
    return n;
  }
}

/** Every cache under one folder, one subfolder each. */
export class FileCaches {
  private readonly open_ = new Map<string, FileCache>();

  constructor(readonly root: string) {
    mkdirSync(root, { recursive: true });
  }

  private folder(name: string): string {
    return join(this.root, encodeURIComponent(name));
  }

  async open(name: string): Promise<FileCache> {
    let cache = this.open_.get(name);
    if (!cache) this.open_.set(name, (cache = new FileCache(this.folder(name))));
    return cache;
  }

  async has(name: string): Promise<boolean> {
    return readdirSync(this.root).includes(encodeURIComponent(name));
  }

  async delete(name: string): Promise<boolean> {
    const had = await this.has(name);
    this.open_.delete(name);
    rmSync(this.folder(name), { recursive: true, force: true });
    return had;
  }

  async keys(): Promise<string[]> {
    return readdirSync(this.root, { withFileTypes: true })
      .filter((d) => d.isDirectory())
      .map((d) => decodeURIComponent(d.name));
  }

  async match(request: RequestInfo | URL): Promise<Response | undefined> {
    for (const name of await this.keys()) {
      const hit = await (await this.open(name)).match(request);
      if (hit) return hit;
    }
    return undefined;
  }

  /** What the disk holding the folder has room for, as navigator.storage.estimate() reports it in a browser. */
  async estimate(): Promise<{ usage: number; quota: number }> {
    const s = statfsSync(this.root);
    return { usage: 0, quota: s.bavail * s.bsize };
  }

  /** For the code that takes a browser's CacheStorage. */
  asCacheStorage(): CacheStorage {
    return this as unknown as CacheStorage;
  }
}
