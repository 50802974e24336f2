import { estimateStorage } from '../storage-room';
import { LOCAL_MODEL_DIR, localModelKey } from './models';
import { fallbackStore, type FileStore, MemoryFileStore, modelStorageKind } from './model-stores';

/**
 * Copies of GGUF files a person picked, kept under a stable key so that a
 * paused run finds its model again after a reload: in the origin's private
 * file system, or where the browser has none, in Cache Storage (or, without
 * that either, the picked file itself until the page closes).
 */

/** One picked model's files. */
interface ModelFolder {
  has(name: string): Promise<boolean>;
  write(name: string, file: File, onBytes: (n: number) => void): Promise<void>;
  /** Every file in it with its name. */
  files(): Promise<File[]>;
}

/** Every picked model this browser keeps. */
export interface PickedShelf {
  /** The model's folder; null where it is not kept and `create` is false. */
  folder(key: string, create: boolean): Promise<ModelFolder | null>;
  keys(): Promise<string[]>;
  remove(key: string): Promise<void>;
}

const COMPLETE = '.complete';

// ---------------------------------------------------------------- the private file system

interface SyncHandle {
  truncate(size: number): void;
  write(data: Uint8Array, options: { at: number }): number;
  flush(): void;
  close(): void;
}

type Entries = AsyncIterable<[string, FileSystemHandle]>;

/** Writes a blob into a file of the private file system without holding it in memory. */
async function writeFile(dir: FileSystemDirectoryHandle, name: string, blob: Blob, onBytes: (n: number) => void): Promise<void> {
  const handle = await dir.getFileHandle(name, { create: true });
  const reader = blob.stream().getReader();
  if ('createWritable' in handle) {
    const out = await handle.createWritable();
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        await out.write(value);
        onBytes(value.byteLength);
      }
      await out.close();
    } catch (e) {
      // Best effort: the copy's own failure is what is thrown.
      await out.abort().catch(() => undefined);
      throw e;
    }
    return;
  }
  // Browsers without createWritable (Safari before 18) have sync access handles, in workers only.
  const sync = await (handle as unknown as { createSyncAccessHandle(): Promise<SyncHandle> }).createSyncAccessHandle();
  try {
    sync.truncate(0);
    let at = 0;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      sync.write(value, { at });
      at += value.byteLength;
      onBytes(value.byteLength);
    }
    sync.flush();
  } finally {
    sync.close();
  }
}

function opfsFolder(dir: FileSystemDirectoryHandle): ModelFolder {
  return {
    async has(name) {
      try {
        await dir.getFileHandle(name);
        return true;
      } catch {
        return false;
      }
    },
    write: (name, file, onBytes) => writeFile(dir, name, file, onBytes),
    async files() {
      const files: File[] = [];
      for await (const [, handle] of dir as unknown as Entries) if (handle.kind === 'file') files.push(await (handle as FileSystemFileHandle).getFile());
      return files;
    },
  };
}

async function opfsRoot(create: boolean): Promise<FileSystemDirectoryHandle | null> {
  try {
    return await (await navigator.storage.getDirectory()).getDirectoryHandle(LOCAL_MODEL_DIR, { create });
  } catch {
    return null;
  }
}

const opfsShelf: PickedShelf = {
  async folder(key, create) {
    const root = await opfsRoot(create);
    try {
      return root ? opfsFolder(await root.getDirectoryHandle(key, { create })) : null;
    } catch {
      return null;
    }
  },
  async keys() {
    const root = await opfsRoot(false);
    const keys: string[] = [];
    if (root) for await (const [key, handle] of root as unknown as Entries) if (handle.kind === 'directory') keys.push(key);
    return keys;
  },
  async remove(key) {
    await (await opfsRoot(false))?.removeEntry(key, { recursive: true });
  },
};

// ---------------------------------------------------------------- Cache Storage, or memory

/** A shelf in a file store: each file under "key/name". */
export function storeShelf(store: FileStore): PickedShelf {
  const keysOf = async () => (await store.list()).map((f) => f.key);
  return {
    async folder(key, create) {
      const prefix = `${key}/`;
      if (!create && !(await keysOf()).some((k) => k.startsWith(prefix))) return null;
      return {
        has: async (name) => (await store.getSize(prefix + name)) >= 0,
        async write(name, file, onBytes) {
          // Without a place to copy to, the picked file itself is used: it stays on disk, nothing is read into memory.
          if (store instanceof MemoryFileStore) {
            store.keep(prefix + name, file);
            onBytes(file.size);
            return;
          }
          const counted = file.stream().pipeThrough(
            new TransformStream<Uint8Array, Uint8Array>({
              transform(chunk, out) {
                onBytes(chunk.byteLength);
                out.enqueue(chunk);
              },
            }),
          );
          await store.write(prefix + name, counted);
        },
        async files() {
          const files: File[] = [];
          for (const k of await keysOf()) {
            const blob = k.startsWith(prefix) ? await store.read(k) : null;
            if (blob) files.push(new File([blob], k.slice(prefix.length)));
          }
          return files;
        },
      };
    },
    async keys() {
      return [...new Set((await keysOf()).map((k) => k.split('/')[0]!))];
    },
    async remove(key) {
      for (const k of await keysOf()) if (k.startsWith(`${key}/`)) await store.delete(k);
    },
  };
}

/** Where this browser keeps picked models. */
export async function pickedShelf(): Promise<PickedShelf> {
  const kind = await modelStorageKind();
  return kind === 'opfs' ? opfsShelf : storeShelf(fallbackStore(LOCAL_MODEL_DIR, kind));
}

/** The GGUF files of a folder, in name order (so split parts come in order), and whether it was written whole. */
export async function folderContents(folder: ModelFolder): Promise<{ files: File[]; complete: boolean }> {
  const all = await folder.files();
  return {
    files: all.filter((f) => f.name.toLowerCase().endsWith('.gguf')).sort((a, b) => a.name.localeCompare(b.name)),
    complete: all.some((f) => f.name === COMPLETE),
  };
}

/** Room this site may still use, where the browser tells it (WebKitGTK by default has no StorageManager). */
async function roomLeft(): Promise<number | undefined> {
  const { usage, quota } = await estimateStorage();
  return quota === undefined ? undefined : Math.max(0, quota - (usage ?? 0));
}

/**
 * Copies picked GGUF files into this browser's storage under their stable
 * key; files already stored whole are not copied again. Nothing is sent
 * anywhere. Returns the key and a name to show.
 */
export async function saveLocalModel(
  files: readonly File[],
  onProgress?: (fraction: number) => void,
  shelf?: PickedShelf,
): Promise<{ key: string; name: string; bytes: number }> {
  if (files.length === 0) throw new Error('Choose at least one GGUF file.');
  for (const f of files) {
    if (!/\.gguf$/i.test(f.name)) throw new Error(`"${f.name}" is not a GGUF file (.gguf).`);
    if (f.size === 0) throw new Error(`"${f.name}" is empty.`);
  }
  const key = localModelKey(files);
  const sorted = [...files].sort((a, b) => a.name.localeCompare(b.name));
  const bytes = sorted.reduce((n, f) => n + f.size, 0);
  const name = sorted.length === 1 ? sorted[0]!.name : `${sorted[0]!.name} (+${sorted.length - 1} parts)`;
  const folder = (await (shelf ?? (await pickedShelf())).folder(key, true))!;
  if (await folder.has(COMPLETE)) {
    onProgress?.(1);
    return { key, name, bytes };
  }
  const room = await roomLeft();
  if (room !== undefined && room < bytes) {
    throw new Error(`The model needs ${(bytes / 1e9).toFixed(2)} GB, but this browser allows this site only ${(room / 1e9).toFixed(2)} GB more.`);
  }
  let written = 0;
  for (const f of sorted) {
    await folder.write(f.name, f, (n) => {
      written += n;
      onProgress?.(written / bytes);
    });
  }
  // Written last, so that a copy cut short is never taken for a whole one.
  await folder.write(COMPLETE, new File([], COMPLETE), () => undefined);
  return { key, name, bytes };
}

/** The stored files of a picked model, in name order. */
export async function openLocalModel(key: string, shelf?: PickedShelf): Promise<File[]> {
  const folder = await (shelf ?? (await pickedShelf())).folder(key, false);
  if (!folder) throw new Error('The model file chosen for this run is no longer stored in this browser. Choose the GGUF file again.');
  const { files, complete } = await folderContents(folder);
  if (!complete) throw new Error('The copy of the chosen model file was not finished. Choose the GGUF file again.');
  return files;
}
