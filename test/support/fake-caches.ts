/** Cache Storage in memory, as much of it as the model downloader uses; `limit` bytes in all, then QuotaExceededError. */
export class FakeCaches {
  readonly stores = new Map<string, Map<string, { body: ArrayBuffer; headers: [string, string][] }>>();
  used = 0;

  constructor(readonly limit = Infinity) {}

  async open(name: string) {
    let store = this.stores.get(name);
    if (!store) this.stores.set(name, (store = new Map()));
    const urlOf = (r: RequestInfo | URL) => (typeof r === 'string' ? r : r instanceof URL ? r.href : r.url);
    return {
      match: async (r: RequestInfo | URL) => {
        const hit = store.get(urlOf(r));
        return hit ? new Response(hit.body.slice(0), { headers: hit.headers }) : undefined;
      },
      put: async (r: RequestInfo | URL, res: Response) => {
        const body = await res.arrayBuffer();
        if (this.used + body.byteLength > this.limit) throw new DOMException('Quota exceeded', 'QuotaExceededError');
        this.used += body.byteLength;
        store.set(urlOf(r), { body, headers: [...res.headers] });
      },
      keys: async () => [...store.keys()].map((u) => new Request(u)),
      delete: async (r: RequestInfo | URL) => store.delete(urlOf(r)),
    };
  }

  keys(name: string): string[] {
    return [...(this.stores.get(name)?.keys() ?? [])].sort();
  }

  asCacheStorage(): CacheStorage {
    return this as unknown as CacheStorage;
  }
}

/** A body that sends `bytes` up to `dropAt`, then fails as a dropped connection does (once those bytes are read). */
export function droppingBody(bytes: Uint8Array, dropAt: number): ReadableStream<Uint8Array> {
  let sent = false;
  return new ReadableStream({
    pull(c) {
      if (sent) return c.error(new TypeError('network error'));
      sent = true;
      c.enqueue(bytes.slice(0, dropAt));
    },
  });
}
