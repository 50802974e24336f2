/// <reference lib="webworker" />
import { hashBytes } from '../src/ingest/hash';

/**
 * Hashes a file's bytes on a thread of its own while the agent worker reads
 * them: WebCrypto's digest runs on the thread that asks for it.
 */
self.onmessage = async (e: MessageEvent<{ id: number; bytes: Uint8Array<ArrayBuffer> }>) => {
  const { id, bytes } = e.data;
  try {
    self.postMessage({ id, hash: await hashBytes(bytes) });
  } catch (error) {
    self.postMessage({ id, error: String(error) });
  }
};
