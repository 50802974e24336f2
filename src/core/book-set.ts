/**
 * Several books read as one stream with one memory. Each book is introduced
 * the way RULER-HotpotQA introduces its documents, a line `Document {i}:` and
 * then the title, and the books are joined by a blank line. A chunk never
 * holds the end of one book and the start of the next: each book is cut on
 * its own, so the model sees a document begin at the top of a chunk.
 */
import type { Anchor } from './anchors';
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

/** The set's text and where each book lies in it. */
export function joinBooks(books: readonly SetBookText[]): { text: string; spans: BookSpan[] } {
  const spans: BookSpan[] = [];
  const pieces: string[] = [];
  let at = 0;
  books.forEach((book, i) => {
    if (i > 0) {
      pieces.push(BOOK_SEPARATOR);
      at += BOOK_SEPARATOR.length;
    }
    const header = bookHeader(i, book.title);
    pieces.push(header, book.text);
    spans.push({ start: at, body: at + header.length, end: at + header.length + book.text.length });
    at += header.length + book.text.length;
  });
  return { text: pieces.join(''), spans };
}

/**
 * The chunks of book after book, lazily: book `i` is tokenized only once
 * every chunk of the books before it has been asked for, so the first
 * chunk of a set is ready as soon as a one-book read's. Each chunk starts at
 * or after its book's header and ends at or before the book's end; the
 * separator between books belongs to no chunk.
 */
export function* chunkBooks(text: string, spans: readonly BookSpan[], tokenizer: Tokenizer, maxTokens: number, from = 0): Generator<ChunkSpan> {
  for (const span of spans) {
    if (span.end <= from) continue;
    const own = text.slice(span.start, span.end);
    // A resume goes on from the end of the last chunk it kept, a chunk boundary of this book (or its start).
    const at = Math.max(0, from - span.start);
    for (const c of chunkText(own, tokenizer, maxTokens, at)) yield { ...c, start: c.start + span.start, end: c.end + span.start };
  }
}

/** Every chunk of the set. */
export function chunkAllBooks(text: string, spans: readonly BookSpan[], tokenizer: Tokenizer, maxTokens: number): ChunkSpan[] {
  return [...chunkBooks(text, spans, tokenizer, maxTokens)];
}

/** The index of the book that holds `offset` (a header belongs to its book). */
export function bookAt(spans: readonly BookSpan[], offset: number): number {
  let lo = 0;
  let hi = spans.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (spans[mid]!.start <= offset) lo = mid + 1;
    else hi = mid;
  }
  return Math.max(0, lo - 1);
}

/**
 * The set's anchors: each book's own, moved to where its text lies in the
 * set, after a 'book' anchor at its header that names it. describePlace then
 * names the book as well as the chapter and page.
 */
export function setAnchors(books: readonly { title: string; anchors?: readonly Anchor[] }[], spans: readonly BookSpan[]): Anchor[] {
  const out: Anchor[] = [];
  books.forEach((book, i) => {
    const span = spans[i]!;
    out.push({ at: span.start, kind: 'book', label: book.title });
    for (const a of book.anchors ?? []) if (span.body + a.at < span.end || a.at === 0) out.push({ ...a, at: span.body + a.at });
  });
  return out;
}

/** A run as its places need it: its book, or the books of its set with where each lies. */
export interface PlacedRun {
  documentId: string;
  books?: readonly (BookSpan & { documentId: string; title: string })[];
}

/**
 * The chapters, headings and pages of a run's text, read with `anchorsOf` (a
 * book's own): its book's, or for a set each book's moved to where it lies,
 * after an anchor naming it, so that every place names the book.
 */
export async function runAnchors(run: PlacedRun, anchorsOf: (documentId: string) => Promise<Anchor[]>): Promise<Anchor[]> {
  if (!run.books) return anchorsOf(run.documentId);
  const own = await Promise.all(run.books.map(async (b) => ({ title: b.title, anchors: await anchorsOf(b.documentId).catch(() => []) })));
  return setAnchors(own, run.books);
}
