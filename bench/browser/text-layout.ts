/**
 * How a long text is best kept in IndexedDB, in Chromium: one value (the
 * layout before parts), or parts of a bounded size as strings or as UTF-8
 * bytes. For each: the time to write the whole text, to read it all back, to
 * read one chunk's range, and the bytes on disk the browser reports.
 */

export interface LayoutResult {
  layout: string;
  partChars: number;
  parts: number;
  /** Writing every part, each in a transaction of its own. */
  writeMs: number;
  /** Writing the document record with the first part: when reading may start. */
  firstMs: number;
  readAllMs: number;
  /** One 20,000-character range in the middle of the text. */
  readRangeMs: number;
  diskBytes: number;
  error?: string;
}

function done(tx: IDBTransaction): Promise<void> {
  return new Promise((resolve, reject) => {
    tx.oncomplete = () => resolve();
    tx.onerror = () => reject(tx.error);
    tx.onabort = () => reject(tx.error ?? new Error('aborted'));
  });
}

function result<T>(req: IDBRequest<T>): Promise<T> {
  return new Promise((resolve, reject) => {
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(req.error);
  });
}

async function fresh(name: string): Promise<IDBDatabase> {
  await result(indexedDB.deleteDatabase(name) as unknown as IDBRequest<unknown>);
  const open = indexedDB.open(name, 1);
  open.onupgradeneeded = () => {
    open.result.createObjectStore('documents', { keyPath: 'id' });
    open.result.createObjectStore('parts', { keyPath: ['id', 'part'] });
  };
  return result(open);
}

async function usage(): Promise<number> {
  return (await navigator.storage.estimate()).usage ?? 0;
}

type Encode = (s: string) => string | Uint8Array;
type Decode = (v: string | Uint8Array) => string;

const utf8 = new TextEncoder();
const fromUtf8 = new TextDecoder();

/** Cuts at `size` characters, stepping back one where that would split a surrogate pair (UTF-8 cannot hold half of one). */
function cuts(text: string, size: number): number[] {
  const out = [0];
  while (out.at(-1)! < text.length) {
    let end = Math.min(text.length, out.at(-1)! + size);
    const c = text.charCodeAt(end - 1);
    if (end < text.length && c >= 0xd800 && c <= 0xdbff) end--;
    out.push(end);
  }
  return out;
}

async function measure(text: string, layout: string, partChars: number, encode: Encode, decode: Decode): Promise<LayoutResult> {
  const db = await fresh(`layout-${layout}-${partChars}`);
  const before = await usage();
  const bounds = cuts(text, partChars);
  const parts = bounds.length - 1;
  const out: LayoutResult = { layout, partChars, parts, writeMs: 0, firstMs: 0, readAllMs: 0, readRangeMs: 0, diskBytes: 0 };
  try {
    const t0 = performance.now();
    for (let i = 0; i < parts; i++) {
      const stores = i === 0 ? ['documents', 'parts'] : ['parts'];
      const tx = db.transaction(stores, 'readwrite');
      if (i === 0) tx.objectStore('documents').put({ id: 'doc', chars: text.length, bounds });
      tx.objectStore('parts').put({ id: 'doc', part: i, text: encode(text.slice(bounds[i], bounds[i + 1])) });
      await done(tx);
      if (i === 0) out.firstMs = performance.now() - t0;
    }
    out.writeMs = performance.now() - t0;
    out.diskBytes = (await usage()) - before;

    const t1 = performance.now();
    const all = await result(
      db
        .transaction('parts')
        .objectStore('parts')
        .getAll(IDBKeyRange.bound(['doc', 0], ['doc', Infinity])),
    );
    const whole = all.map((p: { text: string | Uint8Array }) => decode(p.text)).join('');
    if (whole.length !== text.length || whole.charCodeAt(whole.length >> 1) !== text.charCodeAt(text.length >> 1)) throw new Error('read back differs');
    out.readAllMs = performance.now() - t1;

    const start = text.length >> 1;
    const end = start + 20_000;
    const t2 = performance.now();
    const first = bounds.findIndex((b, i) => bounds[i + 1]! > start);
    const last = bounds.findIndex((b, i) => bounds[i + 1]! >= end);
    const some = await result(
      db
        .transaction('parts')
        .objectStore('parts')
        .getAll(IDBKeyRange.bound(['doc', first], ['doc', last])),
    );
    const range = some
      .map((p: { text: string | Uint8Array }) => decode(p.text))
      .join('')
      .slice(start - bounds[first]!, end - bounds[first]!);
    out.readRangeMs = performance.now() - t2;
    if (range !== text.slice(start, end)) throw new Error('range differs');
  } catch (e) {
    out.error = (e as Error).message;
  }
  db.close();
  await result(indexedDB.deleteDatabase(`layout-${layout}-${partChars}`) as unknown as IDBRequest<unknown>);
  return out;
}

export async function run(textUrl: string, sizes: number[]): Promise<LayoutResult[]> {
  const text = await (await fetch(textUrl)).text();
  const out: LayoutResult[] = [];
  out.push(
    await measure(
      text,
      'one value',
      text.length,
      (s) => s,
      (v) => v as string,
    ),
  );
  for (const size of sizes) {
    out.push(
      await measure(
        text,
        'strings',
        size,
        (s) => s,
        (v) => v as string,
      ),
    );
    out.push(
      await measure(
        text,
        'UTF-8',
        size,
        (s) => utf8.encode(s),
        (v) => fromUtf8.decode(v as Uint8Array),
      ),
    );
  }
  return out;
}
