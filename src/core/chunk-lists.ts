import { ChunkFeed, type ChunkSource } from './chunk-feed';
import { type ChunkSpan, chunkAll } from './chunker';
import type { Tokenizer } from './tokenizer';

/** What a book's chunk list depends on: the book, the tokenizer that counts it and the chunk size. */
export interface ChunkListKey {
  documentId: string;
  tokenizer: Tokenizer;
  chunkTokens: number;
}

export type ChunkListener = (spans: readonly ChunkSpan[], done: boolean) => void;

/** One run's hold on a shared chunk list. */
export interface ChunkLease extends ChunkSource {
  /** The chunk at `index` if it is cut already. */
  span(index: number): ChunkSpan | undefined;
  /** Lets go: the last run to let go of a list still being cut stops the cutting. */
  release(): void;
}

interface Entry {
  spans: ChunkSpan[];
  feed: ChunkFeed | null;
  complete: boolean;
  users: number;
  listeners: Set<ChunkListener>;
}

/**
 * The chunk lists of the books being read, one per book, tokenizer and chunk
 * size: several runs over the same book (several questions) read one list, cut
 * once. A list is cut in the background while runs read it (see ChunkFeed);
 * finished lists of books no run is reading are kept, the most recent `keep`.
 */
export class ChunkLists {
  private readonly entries = new Map<string, Entry>();
  private readonly tokenizerIds = new WeakMap<Tokenizer, number>();
  private nextTokenizerId = 0;

  constructor(private readonly keep = 1) {}

  /**
   * A source of the book's chunks for one run. `known` are the chunks the run
   * stored before (a resume): they are the list's start, and a list begun for
   * this run continues after them. `onProgress` hears of the chunks cut so far
   * (and at once, if the list already holds more than `known`).
   */
  open(key: ChunkListKey, text: string, known: readonly ChunkSpan[], onProgress?: ChunkListener): ChunkLease {
    const id = this.keyOf(key);
    let entry = this.entries.get(id);
    if (!entry) {
      const created: Entry = { spans: [...known], feed: null, complete: false, users: 0, listeners: new Set() };
      created.feed = new ChunkFeed({
        text,
        tokenizer: key.tokenizer,
        maxTokens: key.chunkTokens,
        spans: created.spans,
        onProgress: (spans, done) => {
          created.complete = done;
          for (const l of created.listeners) l(spans, done);
        },
      });
      entry = created;
      this.entries.set(id, entry);
    } else {
      this.entries.delete(id); // most recently used last
      this.entries.set(id, entry);
    }
    const shared = entry;
    shared.users++;
    if (onProgress) {
      shared.listeners.add(onProgress);
      // Chunks cut before this run joined: it stores them now, as it would have heard of them.
      if (shared.spans.length > known.length || (shared.complete && known.length === shared.spans.length)) {
        queueMicrotask(() => onProgress(shared.spans, shared.complete));
      }
    }
    let released = false;
    return {
      at: async (index) => (index < known.length ? known[index] : shared.complete ? shared.spans[index] : shared.feed!.at(index)),
      span: (index) => (index < known.length ? known[index] : shared.spans[index]),
      release: () => {
        if (released) return;
        released = true;
        if (onProgress) shared.listeners.delete(onProgress);
        if (--shared.users === 0) this.letGo(id, shared);
      },
    };
  }

  /** The whole list at once (a skim ranks every chunk before reading): cut now, unless it is at hand. */
  whole(key: ChunkListKey, text: string): readonly ChunkSpan[] {
    const id = this.keyOf(key);
    const entry = this.entries.get(id);
    if (entry?.complete) return entry.spans;
    const spans = chunkAll(text, key.tokenizer, key.chunkTokens);
    if (!entry) {
      this.entries.set(id, { spans, feed: null, complete: true, users: 0, listeners: new Set() });
      this.trim();
    }
    return spans;
  }

  /** Forgets every list of a book (it was deleted). */
  forget(documentId: string): void {
    for (const [id, entry] of this.entries) {
      if (id.startsWith(`${documentId}\u0000`) && entry.users === 0) this.entries.delete(id);
    }
  }

  /** How many lists are held (for tests). */
  get size(): number {
    return this.entries.size;
  }

  private letGo(id: string, entry: Entry): void {
    if (!entry.complete) {
      // Nobody reads it any more: stop cutting; a resume cuts on from its stored chunks.
      entry.feed?.stop();
      this.entries.delete(id);
      return;
    }
    entry.feed = null;
    this.trim();
  }

  /** Keeps the `keep` most recent finished lists that no run is reading. */
  private trim(): void {
    const idle = [...this.entries].filter(([, e]) => e.users === 0 && e.complete);
    for (const [id] of idle.slice(0, Math.max(0, idle.length - this.keep))) this.entries.delete(id);
  }

  private keyOf({ documentId, tokenizer, chunkTokens }: ChunkListKey): string {
    let t = this.tokenizerIds.get(tokenizer);
    if (t === undefined) this.tokenizerIds.set(tokenizer, (t = this.nextTokenizerId++));
    return `${documentId}\u0000${t}\u0000${chunkTokens}`;
  }
}
