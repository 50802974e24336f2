/**
 * The bytes of a weights file received so far, kept in Cache Storage while
 * the file is incomplete, so that a closed tab or a dropped connection costs
 * only what was not yet stored. Each part is one entry whose key is the file's
 * URL with `memagent-part=<start>-<end>` added; its `X-Validator` header holds
 * the host's ETag (or Last-Modified), so a resume can tell that the file on the
 * host is still the one the parts came from. WebLLM never reads this cache.
 */

export const PARTS_CACHE = 'memagent/model-parts';
const PARAM = 'memagent-part';

export interface StoredParts {
  /** In order, contiguous from byte 0. */
  pieces: Blob[];
  bytes: number;
  validator: string | undefined;
}

interface PartKey {
  file: string;
  start: number;
  end: number;
  key: string;
}

function keyFor(file: string, start: number, end: number): string {
  const u = new URL(file);
  u.searchParams.append(PARAM, `${start}-${end}`);
  return u.href;
}

function parse(key: string): PartKey | undefined {
  const u = new URL(key);
  const m = /^(\d+)-(\d+)$/.exec(u.searchParams.get(PARAM) ?? '');
  if (!m) return undefined;
  u.searchParams.delete(PARAM);
  return { file: u.href, start: Number(m[1]), end: Number(m[2]), key };
}

export class PartStore {
  constructor(private readonly caches: CacheStorage) {}

  private async all(): Promise<PartKey[]> {
    const cache = await this.caches.open(PARTS_CACHE);
    return (await cache.keys()).map((r) => parse(r.url)).filter((p): p is PartKey => p !== undefined);
  }

  /** The parts of `file` that join up from its first byte; parts that do not (or come from another version) are dropped. */
  async read(file: string): Promise<StoredParts> {
    const cache = await this.caches.open(PARTS_CACHE);
    const mine = (await this.all()).filter((p) => p.file === file).sort((a, b) => a.start - b.start);
    const out: StoredParts = { pieces: [], bytes: 0, validator: undefined };
    let stray = false;
    for (const p of mine) {
      const hit = stray || p.start !== out.bytes ? undefined : await cache.match(p.key);
      const validator = hit?.headers.get('X-Validator') ?? undefined;
      if (!hit || (out.pieces.length > 0 && validator !== out.validator)) {
        stray = true;
        await cache.delete(p.key);
        continue;
      }
      out.validator = validator;
      out.pieces.push(await hit.blob());
      out.bytes = p.end;
    }
    return out;
  }

  async write(file: string, start: number, piece: Blob, validator: string | undefined): Promise<void> {
    const headers: Record<string, string> = { 'Content-Type': 'application/octet-stream', 'Content-Length': String(piece.size) };
    if (validator !== undefined) headers['X-Validator'] = validator;
    await (await this.caches.open(PARTS_CACHE)).put(keyFor(file, start, start + piece.size), new Response(piece, { status: 200, headers }));
  }

  /** Forgets the parts of one file. */
  clearFile(file: string): Promise<number> {
    return this.clear((f) => f === file);
  }

  /** Forgets the parts of every file under `prefix` (a model's base URL). */
  clearUnder(prefix: string): Promise<number> {
    return this.clear((f) => f.startsWith(prefix));
  }

  private async clear(which: (file: string) => boolean): Promise<number> {
    const cache = await this.caches.open(PARTS_CACHE);
    let removed = 0;
    for (const p of await this.all()) if (which(p.file) && (await cache.delete(p.key))) removed++;
    return removed;
  }

  /** Bytes stored per file, for the files whose URL starts with `prefix`. */
  async sizes(prefix: string): Promise<Map<string, number>> {
    const out = new Map<string, number>();
    const mine = (await this.all()).filter((p) => p.file.startsWith(prefix)).sort((a, b) => a.start - b.start);
    for (const p of mine) if ((out.get(p.file) ?? 0) === p.start) out.set(p.file, p.end);
    return out;
  }
}
