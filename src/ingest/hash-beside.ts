/** Files up to this size are copied to be hashed beside their reading; a larger one is hashed first, in place, rather than held twice. */
export const HASH_BESIDE_MAX_BYTES = 64 * 1024 * 1024;

type Reply = { id: number; hash: string } | { id: number; error: string };

/**
 * Hashes copies of files on another thread (one worker, made on first use),
 * so that the thread reading a file need not wait for its hash first. A file
 * given as a Blob is read by that thread itself.
 */
export function hashBesideWith(spawn: () => Worker): (bytes: Uint8Array<ArrayBuffer> | Blob) => Promise<string> | undefined {
  let worker: Worker | undefined;
  let next = 0;
  const waiting = new Map<number, { resolve(hash: string): void; reject(error: Error): void }>();
  return (bytes) => {
    if (!(bytes instanceof Blob) && bytes.length > HASH_BESIDE_MAX_BYTES) return undefined;
    if (!worker) {
      worker = spawn();
      worker.onmessage = (e: MessageEvent<Reply>) => {
        const w = waiting.get(e.data.id);
        waiting.delete(e.data.id);
        if ('hash' in e.data) w?.resolve(e.data.hash);
        else w?.reject(new Error(`The file could not be hashed: ${e.data.error}`));
      };
      worker.onerror = () => {
        for (const w of waiting.values()) w.reject(new Error('The file could not be hashed: the hashing thread stopped. Add the file again.'));
        waiting.clear();
        worker = undefined;
      };
    }
    const id = next++;
    const done = new Promise<string>((resolve, reject) => waiting.set(id, { resolve, reject }));
    // Posted as a copy: the reader may rewrite its own bytes at once.
    worker.postMessage({ id, bytes });
    return done;
  };
}
