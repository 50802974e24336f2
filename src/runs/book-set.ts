import { bookAt, chunkAllBooks, chunkBook, joinBooks, layBooks, ownText } from '../core/book-set';
import type { ChunkLease } from '../core/chunk-lists';
import type { ChunkSpan } from '../core/chunker';
import { chunkCount } from '../core/estimate';
import type { Tokenizer } from '../core/tokenizer';
import type { Library } from '../library/library';
import type { DocumentRecord, RunBook, Store } from '../storage/db';
import { contentHash } from '../storage/schema';
import { RequestError } from '../jobs/request-error';

/** The books of a set as planned: where each lies in the set's text, from their records. */
export interface PlannedSet {
  books: RunBook[];
  /** Tokens of all the books, as their records count them. */
  tokens: number;
  /** About how many chunks of `chunkTokens` the set is cut into: each book's last chunk is its own. */
  chunksAbout(chunkTokens: number): number;
}

/** The books of a set, loaded: their joined text and where each lies in it (a skim ranks every chunk of it). */
export interface LoadedSet extends PlannedSet {
  text: string;
}

/**
 * The longest text a browser holds as one string (V8's limit, 2^29 − 24
 * characters): a skim joins its books into one, so a set longer than this is
 * read without skimming.
 */
export const MAX_JOINED_CHARS = 2 ** 29 - 24;

/** The name a run over several books is listed by: the books' names (see bookName), joined. */
export function setName(names: readonly string[]): string {
  return names.join(' + ');
}

/** The title a book is introduced by in a set: its own title, else its file name without the extension. */
export function bookTitle(doc: { name: string; title?: string }): string {
  return doc.title?.trim() || doc.name.replace(/\.[^.]+$/, '');
}

/** The stored records of the books `ids`, in that order; a book named twice or no longer stored is refused in words. */
async function setDocuments(store: Store, ids: readonly string[]): Promise<DocumentRecord[]> {
  const twice = ids.find((id, i) => ids.indexOf(id) !== i);
  const docs = await Promise.all(ids.map((id) => store.getDocument(id)));
  if (twice) throw new RequestError(`"${docs[ids.indexOf(twice)]?.name ?? twice}" is in the set twice: name each book once.`);
  const missing = ids.filter((_, i) => !docs[i]);
  if (missing.length) {
    throw new RequestError(
      `${missing.length} of the books of this set ${missing.length === 1 ? 'is' : 'are'} no longer stored. Add the ${missing.length === 1 ? 'file' : 'files'} again, or remove ${missing.length === 1 ? 'it' : 'them'} from the set.`,
    );
  }
  return docs as DocumentRecord[];
}

function planned(docs: readonly DocumentRecord[], chars: readonly number[]): PlannedSet {
  const spans = layBooks(docs.map((d, i) => ({ title: bookTitle(d), chars: chars[i]! })));
  const books = docs.map((d, i) => ({
    documentId: d.id,
    name: d.name,
    title: bookTitle(d),
    ...(contentHash(d) ? { sha256: contentHash(d) } : {}),
    ...spans[i]!,
  }));
  return {
    books,
    tokens: docs.reduce((n, d) => n + d.tokens, 0),
    chunksAbout: (chunkTokens) => docs.reduce((n, d) => n + Math.max(1, chunkCount(d.tokens, chunkTokens)), 0),
  };
}

/**
 * Plans the set of books `ids`, in that order, from their records: where each
 * lies in the set's text. No book is read, except one still arriving from its
 * file (its length is known once it has arrived).
 */
export async function planSet(store: Store, library: Library, ids: readonly string[]): Promise<PlannedSet> {
  const docs = await setDocuments(store, ids);
  const chars = await Promise.all(
    docs.map(async (d) => {
      if (!d.importing) return d.chars;
      const text = await library.bookText(d);
      if (text === undefined) throw new RequestError(`"${d.name}" is no longer stored. Add the file again.`);
      return text.length;
    }),
  );
  return planned(docs, chars);
}

/** Loads the books `ids` in that order and joins them into one text (a skim ranks every chunk of the set). */
export async function loadSet(store: Store, library: Library, ids: readonly string[]): Promise<LoadedSet> {
  const docs = await setDocuments(store, ids);
  const chars = docs.reduce((n, d) => n + d.chars, 0);
  if (chars > MAX_JOINED_CHARS) {
    throw new RequestError(
      `These books hold ${Math.round(chars / 1e6)} million characters together, more than a browser keeps in one text (${Math.floor(MAX_JOINED_CHARS / 1e6)} million), which a skim of a set needs. Read them without skimming, or skim fewer books at once.`,
    );
  }
  const texts = await Promise.all(docs.map((d) => library.bookText(d)));
  const gone = docs.find((_, i) => texts[i] === undefined);
  if (gone) throw new RequestError(`"${gone.name}" is no longer stored. Add the file again.`);
  const joined = joinBooks(docs.map((d, i) => ({ title: bookTitle(d), text: texts[i]! })));
  return {
    ...planned(
      docs,
      texts.map((t) => t!.length),
    ),
    text: joined.text,
  };
}

/**
 * The text of a run over a set, book by book: a book is read from storage
 * when the reading reaches it, and let go once it is read, so that the set
 * costs the memory of a book or two, whatever its length. `slice` gives the
 * characters of a range in a book that `own` has loaded.
 */
export class SetText {
  private readonly loaded = new Map<number, string>();

  constructor(
    readonly books: readonly RunBook[],
    /** A book's text, read from storage; undefined when it is no longer stored. */
    private readonly load: (book: RunBook) => Promise<string | undefined>,
  ) {}

  /** Book `index`'s own text, its header first (see core/book-set ownText), read once. */
  async own(index: number): Promise<string> {
    const have = this.loaded.get(index);
    if (have !== undefined) return have;
    const book = this.books[index]!;
    const text = await this.load(book);
    if (text === undefined) throw new Error(`"${book.name}", a book of this run, is no longer stored. Add the file again and start a new run.`);
    if (text.length !== book.end - book.body) throw new Error(`"${book.name}" is not the text this run began reading. Start a new run.`);
    const own = ownText(index, book.title, text);
    this.loaded.set(index, own);
    return own;
  }

  /** Lets go of the books before book `index`. */
  forgetBefore(index: number): void {
    for (const i of this.loaded.keys()) if (i < index) this.loaded.delete(i);
  }

  /** Characters [start, end) of the set, all in one book, which must be loaded. */
  slice(start: number, end: number): string {
    const index = bookAt(this.books, start);
    const own = this.loaded.get(index);
    if (own === undefined) throw new Error(`Book ${index + 1} of the set is not loaded.`);
    const at = this.books[index]!.start;
    return own.slice(start - at, end - at);
  }
}

/** The set's chunks, each within one book. */
export function setChunks(text: string, books: readonly RunBook[], tokenizer: Tokenizer, chunkTokens: number): ChunkSpan[] {
  return chunkAllBooks(text, books, tokenizer, chunkTokens);
}

/** How a SetChunkSource cuts a set's chunks, and who hears of them. */
export interface SetChunkOptions {
  tokenizer: Tokenizer;
  chunkTokens: number;
  /** The chunks stored before a resume: the cutting goes on from where they end. */
  known: readonly ChunkSpan[];
  onCut(spans: readonly ChunkSpan[], done: boolean): void;
}

/**
 * The chunks of a run over a set, cut as the loop asks for them: `known` (the
 * chunks stored before a resume) first, then the rest from where they end.
 * A book is read from storage and tokenized only when the reading reaches it,
 * so the first step of a set comes as soon as a one-book read's. `onCut`
 * hears of every chunk list that grows, to store it with the run.
 */
export class SetChunkSource implements ChunkLease {
  private readonly spans: ChunkSpan[];
  private readonly tokenizer: Tokenizer;
  private readonly chunkTokens: number;
  private readonly onCut: SetChunkOptions['onCut'];
  private book: number;
  private cutter: Generator<ChunkSpan> | null = null;
  private done = false;

  constructor(
    readonly text: SetText,
    { tokenizer, chunkTokens, known, onCut }: SetChunkOptions,
  ) {
    this.tokenizer = tokenizer;
    this.chunkTokens = chunkTokens;
    this.onCut = onCut;
    this.spans = [...known];
    const from = known.at(-1)?.end ?? 0;
    const books = text.books;
    // The book the next chunk is cut from: the one that holds `from`, or the next once that one is cut to its end.
    this.book = books.findIndex((b) => from < b.end);
    if (this.book < 0) this.book = books.length;
  }

  /** The next chunk of the set, reading the next book when one is cut to its end; undefined past the last. */
  private async cutNext(): Promise<ChunkSpan | undefined> {
    const books = this.text.books;
    while (this.book < books.length) {
      if (!this.cutter) {
        const own = await this.text.own(this.book);
        this.cutter = chunkBook(own, books[this.book]!, { tokenizer: this.tokenizer, maxTokens: this.chunkTokens, from: this.spans.at(-1)?.end ?? 0 });
      }
      const next = this.cutter.next();
      if (!next.done) return next.value;
      this.cutter = null;
      this.book++;
    }
    return undefined;
  }

  async at(index: number): Promise<ChunkSpan | undefined> {
    const before = this.spans.length;
    const wasDone = this.done;
    // Only as far as the chunk asked for: the first step waits for one chunk, and the list learns it is done when asked past its end.
    while (!this.done && this.spans.length <= index) {
      const next = await this.cutNext();
      if (next) this.spans.push(next);
      else this.done = true;
    }
    if (this.spans.length > before || this.done !== wasDone) this.onCut(this.spans, this.done);
    const span = this.spans[index];
    if (span) {
      // The loop reads this chunk's text next: its book is at hand, the books before it are let go.
      const book = bookAt(this.text.books, span.start);
      await this.text.own(book);
      this.text.forgetBefore(book);
    }
    return span;
  }

  span(index: number): ChunkSpan | undefined {
    return this.spans[index];
  }

  release(): void {}
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
