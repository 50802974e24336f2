/**
 * Where llama.cpp's model files are kept in this browser. The origin's private
 * file system (OPFS) where there is one; Cache Storage where there is not
 * (WebKitGTK by default); and where neither exists (a page not served over
 * https), only in memory until the page closes: the model then runs from its
 * download, or from the file picked, and is fetched or picked again next time.
 */

export type ModelStorageKind = 'opfs' | 'cache' | 'memory';

interface Scope {
  navigator?: { storage?: { getDirectory?: () => Promise<unknown> } };
  caches?: { open?: unknown };
}

let known: Promise<ModelStorageKind> | undefined;

/**
 * Where this browser can keep model files. The private file system counts only
 * where it opens: WebKit has `getDirectory` in a session that keeps nothing (an
 * automated MiniBrowser), where it rejects.
 */
export function modelStorageKind(scope?: Scope): Promise<ModelStorageKind> {
  if (scope) return probe(scope);
  known ??= probe(globalThis as Scope);
  return known;
}

async function probe(scope: Scope): Promise<ModelStorageKind> {
  try {
    if (typeof scope.navigator?.storage?.getDirectory === 'function') {
      await scope.navigator.storage.getDirectory();
      return 'opfs';
    }
  } catch {
    // There, but unusable: as if it were not.
  }
  return typeof scope.caches?.open === 'function' ? 'cache' : 'memory';
}

/** A store of named files: the shape of wllama's StorageBackend, which its CacheManager takes. */
export interface FileStore {
  isSupported(): boolean;
  /** The file, or null where there is none. */
  read(key: string): Promise<Blob | null>;
  write(key: string, stream: ReadableStream<Uint8Array>): Promise<void>;
  /** Its size in bytes, or -1 where there is none. */
  getSize(key: string): Promise<number>;
  list(): Promise<{ key: string; size: number }[]>;
  delete(key: string): Promise<void>;
}

/**
 * Files in one Cache Storage cache, each beside a small entry with its size:
 * listing a model must not read gigabytes back to learn how big it is.
 */
export class CacheFileStore implements FileStore {
  private readonly prefix: string;

  constructor(
    private readonly name: string,
    private readonly caches: CacheStorage | undefined = globalThis.caches,
    origin = globalThis.location?.origin ?? 'http://localhost',
  ) {
    this.prefix = `${origin}/__${name}/`;
  }

  isSupported(): boolean {
    return typeof this.caches?.open === 'function';
  }

  private open(): Promise<Cache> {
    return this.caches!.open(this.name);
  }

  private url(key: string, size = false): string {
    return `${this.prefix}${encodeURIComponent(key)}${size ? '?size' : ''}`;
  }

  async read(key: string): Promise<Blob | null> {
    const response = await (await this.open()).match(this.url(key));
    return response ? response.blob() : null;
  }

  async write(key: string, stream: ReadableStream<Uint8Array>): Promise<void> {
    const cache = await this.open();
    let bytes = 0;
    const counted = stream.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, out) {
          bytes += chunk.byteLength;
          out.enqueue(chunk);
        },
      }),
    );
    // The size is written last: a file without it was cut short and counts as absent.
    await cache.delete(this.url(key, true));
    await cache.put(this.url(key), new Response(counted, { headers: { 'Content-Type': 'application/octet-stream' } }));
    await cache.put(this.url(key, true), new Response(String(bytes)));
  }

  async getSize(key: string): Promise<number> {
    const response = await (await this.open()).match(this.url(key, true));
    return response ? Number(await response.text()) : -1;
  }

  async list(): Promise<{ key: string; size: number }[]> {
    const cache = await this.open();
    const files: { key: string; size: number }[] = [];
    for (const request of await cache.keys()) {
      const url = new URL(request.url);
      if (url.search !== '?size' || !request.url.startsWith(this.prefix)) continue;
      const size = Number(await (await cache.match(request))!.text());
      files.push({ key: decodeURIComponent(url.pathname.slice(new URL(this.prefix).pathname.length)), size });
    }
    return files;
  }

  async delete(key: string): Promise<void> {
    const cache = await this.open();
    await cache.delete(this.url(key, true));
    await cache.delete(this.url(key));
  }
}

/** Files kept only while this worker lives. */
export class MemoryFileStore implements FileStore {
  private readonly files = new Map<string, Blob>();

  isSupported(): boolean {
    return true;
  }

  async read(key: string): Promise<Blob | null> {
    return this.files.get(key) ?? null;
  }

  async write(key: string, stream: ReadableStream<Uint8Array>): Promise<void> {
    this.files.set(key, await new Response(stream).blob());
  }

  /** Keeps a file as it is (a picked file stays on disk; nothing is copied). */
  keep(key: string, file: Blob): void {
    this.files.set(key, file);
  }

  async getSize(key: string): Promise<number> {
    return this.files.get(key)?.size ?? -1;
  }

  async list(): Promise<{ key: string; size: number }[]> {
    return [...this.files].map(([key, blob]) => ({ key, size: blob.size }));
  }

  async delete(key: string): Promise<void> {
    this.files.delete(key);
  }
}

const stores = new Map<string, FileStore>();

/** The one store of this name where the browser has no private file system: Cache Storage, or memory. */
export function fallbackStore(name: string, kind: Exclude<ModelStorageKind, 'opfs'>): FileStore {
  let store = stores.get(name);
  if (!store) {
    store = kind === 'cache' ? new CacheFileStore(name) : new MemoryFileStore();
    stores.set(name, store);
  }
  return store;
}

/** The cache for models downloaded from a URL, where there is no private file system. */
export const DOWNLOADS = 'memagent-wllama-models';
