/// <reference lib="webworker" />
import { hashBytes } from '../src/ingest/hash';

/**
 * Hashes a file's bytes on a thread of its own while the agent worker reads
 * them: WebCrypto's digest runs on the thread that asks for it.
 */
self.onmessage = async (e: MessageEvent<{ id: number; bytes: Uint8Array<ArrayBuffer> | Blob }>) => {
  const { id, bytes } = e.data;
  try {
    // A file is read here, on this thread: the agent worker never holds it whole.
    self.postMessage({ id, hash: await hashBytes(bytes instanceof Blob ? new Uint8Array(await bytes.arrayBuffer()) : bytes) });
  } catch (error) {
    self.postMessage({ id, error: String(error) });
  }
};
