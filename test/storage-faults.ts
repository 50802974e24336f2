/**
 * Faults injected at the storage boundary of fake-indexeddb: a write request
 * fails with a QuotaExceededError, the error a browser raises when a site's
 * storage is full (or with another error a browser raises, as Chromium does),
 * and its transaction aborts and rolls back as the IndexedDB specification
 * requires. Everything above (idb, Store, Runner) runs unchanged. Import after
 * 'fake-indexeddb/auto'.
 */

type StoreRecord = (this: { name: string }, ...args: unknown[]) => unknown;

interface RawObjectStorePrototype {
  storeRecord: StoreRecord;
}

let prototype: RawObjectStorePrototype | null = null;

/** The prototype behind every fake object store, found through a throwaway database. */
async function rawObjectStorePrototype(): Promise<RawObjectStorePrototype> {
  if (prototype) return prototype;
  const db = await new Promise<IDBDatabase>((resolve, reject) => {
    const open = indexedDB.open('storage-faults-probe', 1);
    open.onupgradeneeded = () => open.result.createObjectStore('probe');
    open.onsuccess = () => resolve(open.result);
    open.onerror = () => reject(open.error);
  });
  const store = db.transaction('probe', 'readonly').objectStore('probe') as unknown as { _rawObjectStore?: object };
  db.close();
  if (!store._rawObjectStore) throw new Error('fake-indexeddb changed its internals: no _rawObjectStore.');
  prototype = Object.getPrototypeOf(store._rawObjectStore) as RawObjectStorePrototype;
  return prototype;
}

export class QuotaFault {
  /** Writes refused so far. */
  refusals = 0;
  private rule: { stores: Set<string> | null; allowed: number; error: () => DOMException } | null = null;

  private constructor(
    private readonly original: StoreRecord,
    private readonly proto: RawObjectStorePrototype,
  ) {}

  static async install(): Promise<QuotaFault> {
    const proto = await rawObjectStorePrototype();
    const fault = new QuotaFault(proto.storeRecord, proto);
    proto.storeRecord = function (this: { name: string }, ...args: unknown[]) {
      // A request's write carries its transaction's rollback log; a rollback's own restore does not, and is never refused.
      if (args[2] && fault.refuses(this.name)) {
        fault.refusals++;
        throw fault.rule!.error();
      }
      return fault.original.apply(this, args);
    };
    return fault;
  }

  /**
   * From now on, after `allowed` more writes go through, every write to `stores` (default: all) is refused,
   * with a QuotaExceededError or the error `error` makes.
   */
  fill(options: { stores?: string[]; allowed?: number; error?: () => DOMException } = {}): void {
    this.rule = {
      stores: options.stores ? new Set(options.stores) : null,
      allowed: options.allowed ?? 0,
      error: options.error ?? (() => new DOMException('The quota has been exceeded.', 'QuotaExceededError')),
    };
  }

  /** Room again: writes go through. */
  free(): void {
    this.rule = null;
  }

  uninstall(): void {
    this.proto.storeRecord = this.original;
  }

  private refuses(store: string): boolean {
    const rule = this.rule;
    if (!rule || (rule.stores && !rule.stores.has(store))) return false;
    if (rule.allowed > 0) {
      rule.allowed--;
      return false;
    }
    return true;
  }
}
