/**
 * A whole IndexedDB database as JSON, store by store (key path, indexes,
 * records), and back: how the schema-upgrade tests keep databases written by
 * older versions of the app. Typed arrays, which JSON has no form for, are
 * written as {"$Uint32Array": [...]} and restored as typed arrays.
 */

export interface Dump {
  name: string;
  version: number;
  stores: Record<string, { keyPath: string | string[]; indexes: { name: string; keyPath: string | string[] }[]; records: unknown[] }>;
}

const TYPED = { Uint8Array, Uint32Array } as const;
type TypedName = keyof typeof TYPED;

function toJson(value: unknown): unknown {
  for (const name of Object.keys(TYPED) as TypedName[]) {
    if (value instanceof TYPED[name]) return { [`$${name}`]: [...value] };
  }
  if (Array.isArray(value)) return value.map(toJson);
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, toJson(v)]));
  return value;
}

/** A record read back from a dump, typed arrays restored. */
export function fromJson(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(fromJson);
  if (value && typeof value === 'object') {
    const entries = Object.entries(value);
    if (entries.length === 1 && entries[0]![0].startsWith('$') && entries[0]![0].slice(1) in TYPED) {
      return TYPED[entries[0]![0].slice(1) as TypedName].from(entries[0]![1] as number[]);
    }
    return Object.fromEntries(entries.map(([k, v]) => [k, fromJson(v)]));
  }
  return value;
}

function request<T>(req: IDBRequest<T>): Promise<T> {
  return new Promise((resolve, reject) => {
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(req.error);
  });
}

/** Every store of database `name` with every record, as the version that wrote it laid them out. */
export async function dumpDatabase(name: string): Promise<Dump> {
  const open = indexedDB.open(name);
  const db = await request(open);
  const dump: Dump = { name, version: db.version, stores: {} };
  for (const storeName of [...db.objectStoreNames].sort()) {
    const store = db.transaction(storeName).objectStore(storeName);
    const indexes = [...store.indexNames].map((i) => ({ name: i, keyPath: store.index(i).keyPath }));
    const records = await request(store.getAll());
    dump.stores[storeName] = { keyPath: store.keyPath as string | string[], indexes, records: records.map(toJson) };
  }
  db.close();
  return dump;
}

/** Writes a dump with raw IndexedDB calls into a new database `dbName`, exactly as the old version laid it out. */
export async function restoreDatabase(dbName: string, dump: Dump): Promise<void> {
  const open = indexedDB.open(dbName, dump.version);
  open.onupgradeneeded = () => {
    for (const [name, store] of Object.entries(dump.stores)) {
      const os = open.result.createObjectStore(name, { keyPath: store.keyPath });
      for (const index of store.indexes) os.createIndex(index.name, index.keyPath);
    }
  };
  const db = await request(open);
  const names = Object.keys(dump.stores);
  const tx = db.transaction(names, 'readwrite');
  for (const name of names) for (const record of dump.stores[name]!.records) tx.objectStore(name).add(fromJson(record));
  await new Promise<void>((resolve, reject) => {
    tx.oncomplete = () => resolve();
    tx.onerror = () => reject(tx.error);
  });
  db.close();
}

/** A database's version and store names, read past the Store: how the schema lies on disk. */
export async function databaseInfo(dbName: string): Promise<{ version: number; stores: string[] }> {
  const db = await request(indexedDB.open(dbName));
  const info = { version: db.version, stores: [...db.objectStoreNames] };
  db.close();
  return info;
}
