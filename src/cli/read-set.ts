/**
 * The files `memagent read` is given, as one text: one file as it is, or
 * several read as one set (core/book-set), in the order given.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { type Anchor, describePlace } from '../core/anchors';
import { type BookSpan, bookName, chunkAllBooks, joinBooks, setAnchors } from '../core/book-set';
import { type ChunkSpan, chunkAll } from '../core/chunker';
import type { Tokenizer } from '../core/tokenizer';
import { ingestBytes, type IngestedText } from '../ingest/ingest';
import { UsageError } from './flags';

/** A file's bytes in a buffer of their own, as the importers take them. */
export function readFileBytes(path: string): Uint8Array<ArrayBuffer> {
  const buf = readFileSync(path);
  const out = new Uint8Array(new ArrayBuffer(buf.byteLength));
  out.set(buf);
  return out;
}

export interface SetBookOnDisk extends BookSpan {
  name: string;
  hash: string;
  title: string;
}

/** What is read: one book, or several as one set (then `books` says where each lies). */
export interface ReadText {
  name: string;
  /** The file's SHA-256; for a set, the SHA-256 of its books' hashes in order. */
  hash: string;
  text: string;
  books?: SetBookOnDisk[];
  /** Where a chunk starting at `offset` is, naming the book ("harbour.txt · Chapter 2"): sets only. */
  placeAt?(offset: number): string;
  /** Chapters, headings and pages by offset into `text`; in a set, each book's after an anchor naming it. */
  anchors?: readonly Anchor[];
}

/** Reads `files` in order; one file is read exactly as before. */
export async function readFiles(files: readonly string[], options: { stripGutenberg: boolean }): Promise<ReadText> {
  for (const f of files) if (!existsSync(f)) throw new UsageError(`There is no file ${f}.`);
  const docs: IngestedText[] = [];
  for (const f of files) docs.push(await ingestBytes(basename(f), readFileBytes(f), options));
  if (docs.length === 1) return docs[0]!;
  const seen = new Map<string, string>();
  for (const [i, d] of docs.entries()) {
    const twice = seen.get(d.hash);
    if (twice) throw new UsageError(`${files[i]} is the same file as ${twice}: name each book once.`);
    seen.set(d.hash, files[i]!);
  }
  const titled = docs.map((d) => ({ title: d.title?.trim() || d.name.replace(/\.[^.]+$/, ''), text: d.text, anchors: d.anchors }));
  const { text, spans } = joinBooks(titled);
  // Places name each book as the app does: its title, else its file's name.
  const anchors = setAnchors(
    docs.map((d) => ({ title: bookName(d), anchors: d.anchors })),
    spans,
  );
  return {
    name: docs.map((d) => d.name).join(' + '),
    hash: createHash('sha256')
      .update(docs.map((d) => d.hash).join('\n'))
      .digest('hex'),
    text,
    books: docs.map((d, i) => ({ name: d.name, hash: d.hash, title: titled[i]!.title, ...spans[i]! })),
    placeAt: (offset) => describePlace(anchors, offset),
    anchors,
  };
}

/** The chunks of what is read: for a set, book by book, none across two. */
export function chunkRead(read: ReadText, tokenizer: Tokenizer, chunkTokens: number): ChunkSpan[] {
  return read.books ? chunkAllBooks(read.text, read.books, tokenizer, chunkTokens) : chunkAll(read.text, tokenizer, chunkTokens);
}
