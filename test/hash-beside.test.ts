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
  onerror: ((e: Event) => void) | null = null;
  posted = 0;
  postMessage(data: { id: number; bytes: Uint8Array<ArrayBuffer> }) {
    this.posted++;
    const copy = structuredClone(data);
    setTimeout(async () => this.onmessage?.(new MessageEvent('message', { data: { id: copy.id, hash: await hashBytes(copy.bytes) } })));
  }
}

const CRLF_BOOK = 'CHAPTER I\r\n\r\nIt was a dark and stormy night; the rain fell in torrents.\r\n'.repeat(400);

describe('hashing a file beside its reading', () => {
  it('hashes the bytes as given, though the reader rewrites its own copy at once', async () => {
    const thread = new HashingThread();
    const hashBeside = hashBesideWith(() => thread as unknown as Worker);
    const bytes = new TextEncoder().encode('one\r\ntwo\r\n');
    const expected = await hashBytes(bytes);
    const hashing = hashBeside(bytes)!;
    bytes.fill(0);
    expect(await hashing).toBe(expected);
  });

  it('leaves a file too large to hold twice to be hashed first, in place', () => {
    const hashBeside = hashBesideWith(() => new HashingThread() as unknown as Worker);
    expect(hashBeside({ length: HASH_BESIDE_MAX_BYTES + 1 } as Uint8Array<ArrayBuffer>)).toBeUndefined();
  });

  it('stores a book under the hash of its bytes as they were before reading normalised its line ends', async () => {
    const thread = new HashingThread();
    const { library } = await testRunner(new ExtractiveEngine(tok), tok, { hashBeside: hashBesideWith(() => thread as unknown as Worker) });
    const bytes = new TextEncoder().encode(CRLF_BOOK);
    const id = await hashBytes(bytes);
    const doc = await library.ingest('storm.txt', bytes, 'extractive');
    expect(thread.posted).toBe(1);
    expect(doc.id).toBe(id);
  });

  it('returns the stored document when the same bytes are added again', async () => {
    const thread = new HashingThread();
    const { library, store } = await testRunner(new ExtractiveEngine(tok), tok, { hashBeside: hashBesideWith(() => thread as unknown as Worker) });
    const first = await library.ingest('storm.txt', new TextEncoder().encode(CRLF_BOOK), 'extractive');
    const again = await library.ingest('storm again.txt', new TextEncoder().encode(CRLF_BOOK), 'extractive');
    expect(again).toEqual(first);
    expect((await store.listDocuments()).map((d) => d.name)).toEqual(['storm.txt']);
  });
});
