/**
 * Several books read as one stream with one memory. Each book is introduced
 * the way RULER-HotpotQA introduces its documents, a line `Document {i}:` and
 * then the title, and the books are joined by a blank line. A chunk never
 * holds the end of one book and the start of the next: each book is cut on
 * its own, so the model sees a document begin at the top of a chunk.
 */
import { type Anchor, countAtOrBefore } from './anchors';
import { type ChunkSpan, chunkText } from './chunker';
import type { Tokenizer } from './tokenizer';

/** One book of a set as the stream needs it. */
export interface SetBookText {
  title: string;
  text: string;
  anchors?: readonly Anchor[];
}

/** Where one book lies in the set's text: its header at `start`, its own text from `body` to `end`. */
export interface BookSpan {
  start: number;
  body: number;
  end: number;
}

/** Between two books: the blank line that RULER-HotpotQA puts between documents. */
export const BOOK_SEPARATOR = '\n\n';

/** The line that introduces book `index` (from 0): "Document 1:", then its title. */
export function bookHeader(index: number, title: string): string {
  return `Document ${index + 1}:\n${title.replace(/\s+/g, ' ').trim()}\n`;
}

/**
 * Where each book lies in the set's text, from the titles and text lengths
 * alone: a set is planned without reading its books.
 */
export function layBooks(books: readonly { title: string; chars: number }[]): BookSpan[] {
  const spans: BookSpan[] = [];
  let at = 0;
  books.forEach((book, i) => {
    if (i > 0) at += BOOK_SEPARATOR.length;
    const body = at + bookHeader(i, book.title).length;
    spans.push({ start: at, body, end: body + book.chars });
    at = body + book.chars;
  });
  return spans;
}

/** The set's text and where each book lies in it. */
export function joinBooks(books: readonly SetBookText[]): { text: string; spans: BookSpan[] } {
  const spans = layBooks(books.map((b) => ({ title: b.title, chars: b.text.length })));
  const text = books.map((b, i) => ownText(i, b.title, b.text)).join(BOOK_SEPARATOR);
  return { text, spans };
}

/** One book's own text as the stream holds it: its header, then its text. */
export function ownText(index: number, title: string, text: string): string {
  return bookHeader(index, title) + text;
}

/** How the books of a set are cut into chunks: by `tokenizer`, `maxTokens` a chunk, from offset `from` of the set (0 by default). */
export interface BookCut {
  tokenizer: Tokenizer;
  maxTokens: number;
  /** A chunk boundary to go on from (a resume), as an offset into the set. */
  from?: number;
}

/**
 * The chunks of one book of a set, cut from its own text (`own`, see ownText)
 * and placed where the book lies (`span`), from `cut.from` (an offset into the
 * set, a chunk boundary of this book) on.
 */
export function* chunkBook(own: string, span: BookSpan, { tokenizer, maxTokens, from = 0 }: BookCut): Generator<ChunkSpan> {
  // A resume goes on from the end of the last chunk it kept, a chunk boundary of this book (or its start).
  const at = Math.max(0, from - span.start);
  for (const c of chunkText(own, tokenizer, maxTokens, at)) yield { ...c, start: c.start + span.start, end: c.end + span.start };
}

/**
 * The chunks of book after book, lazily: book `i` is tokenized only once
 * every chunk of the books before it has been asked for, so the first
 * chunk of a set is ready as soon as a one-book read's. Each chunk starts at
 * or after its book's header and ends at or before the book's end; the
 * separator between books belongs to no chunk.
 */
export function* chunkBooks(text: string, spans: readonly BookSpan[], cut: BookCut): Generator<ChunkSpan> {
  const from = cut.from ?? 0;
  for (const span of spans) {
    if (span.end <= from) continue;
    yield* chunkBook(text.slice(span.start, span.end), span, cut);
  }
}

/** Every chunk of the set. */
export function chunkAllBooks(text: string, spans: readonly BookSpan[], tokenizer: Tokenizer, maxTokens: number): ChunkSpan[] {
  return [...chunkBooks(text, spans, { tokenizer, maxTokens })];
}

/** The index of the book that holds `offset` (a header belongs to its book). */
export function bookAt(spans: readonly BookSpan[], offset: number): number {
  return Math.max(0, countAtOrBefore(spans, offset, (s) => s.start) - 1);
}

/**
 * What the range [start, end) of a set's text (a chunk) holds: the part of
 * book `book`'s header from `headerFrom` to `headerTo` (empty where it starts
 * past the header), and characters [from, to) of the book's own text.
 */
export function bookRange(
  spans: readonly BookSpan[],
  start: number,
  end: number,
): { book: number; headerFrom: number; headerTo: number; from: number; to: number } {
  const book = bookAt(spans, start);
  const span = spans[book]!;
  const headerFrom = Math.min(Math.max(0, start - span.start), span.body - span.start);
  const headerTo = Math.min(Math.max(headerFrom, end - span.start), span.body - span.start);
  const from = Math.max(0, start - span.body);
  const to = Math.max(from, Math.min(end, span.end) - span.body);
  return { book, headerFrom, headerTo, from, to };
}

/**
 * The set's anchors: each book's own, moved to where its text lies in the
 * set, after a 'book' anchor at its header that names it (`title`: give it
 * the book's name, see bookName). describePlace then
 * names the book as well as the chapter and page.
 */
export function setAnchors(books: readonly { title: string; anchors?: readonly Anchor[] }[], spans: readonly BookSpan[]): Anchor[] {
  const out: Anchor[] = [];
  books.forEach((book, i) => {
    const span = spans[i]!;
    out.push({ at: span.start, kind: 'book', label: book.title });
    // A chapter or page where the book's text begins holds its header too: a chunk from the header on is in it.
    for (const a of book.anchors ?? []) if (span.body + a.at < span.end || a.at === 0) out.push({ ...a, at: a.at === 0 ? span.start : span.body + a.at });
  });
  return out;
}

/**
 * How a book is named wherever the app names it (places, a set's list of
 * books, exports): its title where the file has one, else the file's name.
 * A run's book keeps the file's name without its extension as its title where
 * the file had none (what the model read in the book's header line): that is
 * no title, so the file's name stands.
 */
export function bookName(book: { name: string; title?: string }): string {
  const title = book.title?.replace(/\s+/g, ' ').trim();
  return title && title !== book.name.replace(/\.[^.]+$/, '') ? title : book.name;
}

/** A run as its places need it: its book, or the books of its set with where each lies. */
export interface PlacedRun {
  documentId: string;
  books?: readonly (BookSpan & { documentId: string; name: string; title: string })[];
}

/**
 * The chapters, headings and pages of a run's text, read with `anchorsOf` (a
 * book's own): its book's, or for a set each book's moved to where it lies,
 * after an anchor naming it, so that every place names the book.
 */
export async function runAnchors(run: PlacedRun, anchorsOf: (documentId: string) => Promise<Anchor[]>): Promise<Anchor[]> {
  if (!run.books) return anchorsOf(run.documentId);
  const own = await Promise.all(run.books.map(async (b) => ({ title: bookName(b), anchors: await anchorsOf(b.documentId).catch(() => []) })));
  return setAnchors(own, run.books);
}
