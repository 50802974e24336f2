import { beforeAll, describe, expect, it } from 'vitest';
import { ExtractiveEngine } from '../src/engines/extractive/engine';
import { loadQwenTokenizer, type QwenTokenizer } from '../src/engines/qwen-tokenizer';
import { hashBytes } from '../src/ingest/hash';
import { HASH_BESIDE_MAX_BYTES, hashBesideWith } from '../src/ingest/hash-beside';
import { testRunner } from './runner-setup';

let tok: QwenTokenizer;
beforeAll(async () => {
  tok = await loadQwenTokenizer();
});

/** A stand-in for the hashing worker: a message arrives as a structured copy, and the reply comes on a later task. */
class HashingThread {
  onmessage: ((e: MessageEvent) => void) | null = null;
  posted = 0;
  answers = true;
  postMessage(data: { id: number; bytes: Uint8Array<ArrayBuffer> }) {
    this.posted++;
    if (!this.answers) return;
    const copy = structuredClone(data);
    setTimeout(async () => this.onmessage?.(new MessageEvent('message', { data: { id: copy.id, hash: await hashBytes(copy.bytes) } })));
  }
}

const CRLF_BOOK = 'CHAPTER I\r\n\r\nIt was a dark and stormy night; the rain fell in torrents.\r\n'.repeat(400);

describe('hashing a file beside its reading', () => {
  it('hashes the bytes as given, though the reader rewrites its own copy at once', async () => {
    const thread = new HashingThread();
    const hashBeside = hashBesideWith(() => thread);
    const bytes = new TextEncoder().encode('one\r\ntwo\r\n');
    const expected = await hashBytes(bytes);
    const hashing = hashBeside(bytes)!;
    bytes.fill(0);
    expect(await hashing).toBe(expected);
  });

  it('fails the hashes a stopped thread owed, and hashes later files in place', async () => {
    const thread = new HashingThread();
    thread.answers = false;
    const hashBeside = hashBesideWith(() => thread);
    const owed = hashBeside(new TextEncoder().encode('one'))!;
    hashBeside.stopped();
    await expect(owed).rejects.toThrow('the hashing thread stopped');
    expect(hashBeside(new TextEncoder().encode('two'))).toBeUndefined();
    expect(thread.posted).toBe(1);
  });

  it('hashes through a port whose other end the thread takes later, as the page hands it over', async () => {
    const channel = new MessageChannel();
    const hashBeside = hashBesideWith(() => channel.port1);
    const bytes = new TextEncoder().encode('posted before the thread listens');
    const hashing = hashBeside(bytes)!;
    // The hashing thread's side, connected only now: what was posted waited in the channel.
    channel.port2.onmessage = async (e: MessageEvent<{ id: number; bytes: Uint8Array<ArrayBuffer> }>) =>
      channel.port2.postMessage({ id: e.data.id, hash: await hashBytes(e.data.bytes) });
    expect(await hashing).toBe(await hashBytes(new TextEncoder().encode('posted before the thread listens')));
    channel.port1.close();
  });

  it('leaves a file too large to hold twice to be hashed first, in place', () => {
    const hashBeside = hashBesideWith(() => new HashingThread());
    expect(hashBeside({ length: HASH_BESIDE_MAX_BYTES + 1 } as Uint8Array<ArrayBuffer>)).toBeUndefined();
  });

  it('stores a book under the hash of its bytes as they were before reading normalised its line ends', async () => {
    const thread = new HashingThread();
    const { library } = await testRunner(new ExtractiveEngine(tok), tok, { hashBeside: hashBesideWith(() => thread) });
    const bytes = new TextEncoder().encode(CRLF_BOOK);
    const id = await hashBytes(bytes);
    const doc = await library.ingest('storm.txt', bytes, 'extractive');
    expect(thread.posted).toBe(1);
    expect(doc.id).toBe(id);
  });

  it('returns the stored document when the same bytes are added again', async () => {
    const thread = new HashingThread();
    const { library, store } = await testRunner(new ExtractiveEngine(tok), tok, { hashBeside: hashBesideWith(() => thread) });
    const first = await library.ingest('storm.txt', new TextEncoder().encode(CRLF_BOOK), 'extractive');
    const again = await library.ingest('storm again.txt', new TextEncoder().encode(CRLF_BOOK), 'extractive');
    expect(again).toEqual(first);
    expect((await store.listDocuments()).map((d) => d.name)).toEqual(['storm.txt']);
  });
});
