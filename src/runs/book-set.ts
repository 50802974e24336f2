import { chunkAllBooks, chunkBooks, joinBooks } from '../core/book-set';
import type { ChunkLease } from '../core/chunk-lists';
import type { ChunkSpan } from '../core/chunker';
import type { Tokenizer } from '../core/tokenizer';
import type { Library } from '../library/library';
import type { RunBook, Store } from '../storage/db';
import { contentHash } from '../storage/schema';
import { RequestError } from '../jobs/request-error';

/** The books of a set, loaded: their joined text and where each lies in it. */
export interface LoadedSet {
  text: string;
  books: RunBook[];
  /** Tokens of all the books, as their records count them: for the estimate. */
  tokens: number;
}

/** The name a run over several books is listed by: the books' names, joined. */
export function setName(names: readonly string[]): string {
  return names.join(' + ');
}

/** Loads the books `ids` in that order and joins them; a book no longer stored is named. */
export async function loadSet(store: Store, library: Library, ids: readonly string[]): Promise<LoadedSet> {
  const found = await Promise.all(
    ids.map(async (id) => {
      const doc = await store.getDocument(id);
      const text = doc && (await library.bookText(doc));
      return { id, doc, text };
    }),
  );
  const missing = found.filter((f) => !f.doc || f.text === undefined);
  if (missing.length) {
    throw new RequestError(
      `${missing.map((m) => `"${m.doc?.name ?? m.id}"`).join(', ')} ${missing.length === 1 ? 'is' : 'are'} no longer stored. Add the file again.`,
    );
  }
  const joined = joinBooks(found.map((f) => ({ title: bookTitle(f.doc!), text: f.text! })));
  const books = found.map((f, i) => ({ documentId: f.id, name: f.doc!.name, title: bookTitle(f.doc!), sha256: contentHash(f.doc!), ...joined.spans[i]! }));
  return { text: joined.text, books, tokens: found.reduce((n, f) => n + f.doc!.tokens, 0) };
}

/** The title a book is introduced by in a set: its own title, else its file name without the extension. */
export function bookTitle(doc: { name: string; title?: string }): string {
  return doc.title?.trim() || doc.name.replace(/\.[^.]+$/, '');
}

/** The whole text of a run over a set, from its stored books; undefined where one is gone. */
export async function setText(store: Store, library: Library, books: readonly RunBook[]): Promise<string | undefined> {
  try {
    const loaded = await loadSet(
      store,
      library,
      books.map((b) => b.documentId),
    );
    return loaded.text;
  } catch {
    return undefined;
  }
}

/** The set's chunks, each within one book. */
export function setChunks(text: string, books: readonly RunBook[], tokenizer: Tokenizer, chunkTokens: number): ChunkSpan[] {
  return chunkAllBooks(text, books, tokenizer, chunkTokens);
}

/**
 * The chunks of a run over a set, cut as the loop asks for them: `known` (the
 * chunks stored before a resume) first, then the rest from where they end, so
 * a later book is tokenized only when the reading reaches it. `onCut` hears of
 * every chunk list that grows, to store it with the run.
 */
export class SetChunkSource implements ChunkLease {
  private readonly spans: ChunkSpan[];
  private readonly cutter: Generator<ChunkSpan>;
  private done = false;

  constructor(
    text: string,
    books: readonly RunBook[],
    tokenizer: Tokenizer,
    chunkTokens: number,
    known: readonly ChunkSpan[],
    private readonly onCut: (spans: readonly ChunkSpan[], done: boolean) => void,
  ) {
    this.spans = [...known];
    this.cutter = chunkBooks(text, books, tokenizer, chunkTokens, known.at(-1)?.end ?? 0);
  }

  at(index: number): Promise<ChunkSpan | undefined> {
    const before = this.spans.length;
    const wasDone = this.done;
    // One chunk past the one asked for is cut too: the list then knows it is done when its last chunk is read.
    while (!this.done && this.spans.length <= index + 1) {
      const next = this.cutter.next();
      if (next.done) this.done = true;
      else this.spans.push(next.value);
    }
    if (this.spans.length > before || this.done !== wasDone) this.onCut(this.spans, this.done);
    return Promise.resolve(this.spans[index]);
  }

  span(index: number): ChunkSpan | undefined {
    return this.spans[index];
  }

  release(): void {}
}

/** The key a set's chunk list goes by: its books, in order. */
export function setKey(books: readonly Pick<RunBook, 'documentId'>[]): string {
  return `set:${books.map((b) => b.documentId).join('|')}`;
}

/** The books of an imported set-run, each pointed at the same book here (by hash) where there is one. */
export async function relinkBooks(store: Store, books: readonly RunBook[]): Promise<RunBook[]> {
  const here = await store.listDocuments();
  return books.map((b) => {
    if (here.some((d) => d.id === b.documentId)) return b;
    const same = b.sha256 && here.find((d) => contentHash(d) === b.sha256);
    return same ? { ...b, documentId: same.id } : b;
  });
}
