/** Files up to this size are copied to be hashed beside their reading; a larger one is hashed first, in place, rather than held twice. */
export const HASH_BESIDE_MAX_BYTES = 64 * 1024 * 1024;

type Reply = { id: number; hash: string } | { id: number; error: string };

/** The hashing thread's end: a worker, or a port to one (a MessagePort queues what is posted until the thread takes it). */
export interface HashThread {
  postMessage(message: { id: number; bytes: Uint8Array<ArrayBuffer> | Blob }): void;
  onmessage: ((e: MessageEvent<Reply>) => void) | null;
}

export interface HashBeside {
  /** The hash of a copy of `bytes`, made on the other thread; undefined where the file is to be hashed in place. */
  (bytes: Uint8Array<ArrayBuffer> | Blob): Promise<string> | undefined;
  /** The thread stopped: the hashes it owed fail, and later files are hashed in place. */
  stopped(): void;
}

/**
 * Hashes copies of files on another thread (connected on first use), so that
 * the thread reading a file need not wait for its hash first. A file given as
 * a Blob is read by that thread itself.
 */
export function hashBesideWith(connect: () => HashThread): HashBeside {
  let thread: HashThread | undefined;
  let stopped = false;
  let next = 0;
  const waiting = new Map<number, { resolve(hash: string): void; reject(error: Error): void }>();
  const hash = (bytes: Uint8Array<ArrayBuffer> | Blob) => {
    if (stopped || (!(bytes instanceof Blob) && bytes.length > HASH_BESIDE_MAX_BYTES)) return undefined;
    if (!thread) {
      thread = connect();
      thread.onmessage = (e) => {
        const w = waiting.get(e.data.id);
        waiting.delete(e.data.id);
        if ('hash' in e.data) w?.resolve(e.data.hash);
        else w?.reject(new Error(`The file could not be hashed: ${e.data.error}`));
      };
    }
    const id = next++;
    const done = new Promise<string>((resolve, reject) => waiting.set(id, { resolve, reject }));
    // Posted as a copy: the reader may rewrite its own bytes at once.
    thread.postMessage({ id, bytes });
    return done;
  };
  return Object.assign(hash, {
    stopped() {
      stopped = true;
      for (const w of waiting.values()) w.reject(new Error('The file could not be hashed: the hashing thread stopped. Add the file again.'));
      waiting.clear();
    },
  });
}
