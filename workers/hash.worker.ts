/// <reference lib="webworker" />
import { hashBytes } from '../src/ingest/hash';

/**
 * Hashes a file's bytes on a thread of its own while the agent worker reads
 * them: WebCrypto's digest runs on the thread that asks for it. The page makes
 * this thread and hands it the agent worker's end of a channel (see
 * src/ui/client.ts); each request and its reply travel on that port.
 */
self.onmessage = (e: MessageEvent<MessagePort>) => {
  const port = e.data;
  port.onmessage = async (m: MessageEvent<{ id: number; bytes: Uint8Array<ArrayBuffer> | Blob }>) => {
    const { id, bytes } = m.data;
    try {
      // A file is read here, on this thread: the agent worker never holds it whole.
      port.postMessage({ id, hash: await hashBytes(bytes instanceof Blob ? new Uint8Array(await bytes.arrayBuffer()) : bytes) });
    } catch (error) {
      port.postMessage({ id, error: String(error) });
    }
  };
};
