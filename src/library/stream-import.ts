import { cutAnchors } from '../core/anchors';
import { PART_CHARS } from '../core/text-parts';
import { nextTask } from '../core/tasks';
import type { Tokenizer } from '../core/tokenizer';
import { binaryKind, controlShare, hasNul, startsWith } from '../ingest/charset';
import { GUTENBERG_REACH, gutenbergFoot, gutenbergHead } from '../ingest/gutenberg';
import { formatOf } from '../ingest/ingest';
import { chapterAnchors, markdownAnchors } from '../ingest/structure';
import { NotStreamable, Utf8TextStream } from '../ingest/text-stream';
import type { DocumentRecord, StrippedText } from '../storage/schema';
import type { Store } from '../storage/db';
import { mark } from '../jobs/marks';
import { estimateTokens } from './token-counts';

/**
 * Text files of this many bytes are read as a stream. A smaller one is decoded
 * whole in about the time its first part takes to store; a larger one is too,
 * since a stream holds the text twice at its end (its pieces, and the whole
 * joined for the reader) where decoding it whole holds it once.
 */
export const STREAM_BYTES = { min: 4 * 1024 * 1024, max: 64 * 1024 * 1024 };

/** Bytes read from the file at a time: short tasks, so that a read starting meanwhile is not kept waiting. */
const SLICE_BYTES = 256 * 1024;
/** Bytes read first: enough for the first part of most texts, and the GUTENBERG_REACH characters looked at before it. */
const FIRST_SLICE_BYTES = 384 * 1024;

/**
 * Characters kept back from the parts written while the file is read: Project
 * Gutenberg's END marker is looked for in the last GUTENBERG_REACH characters,
 * and the book's end may move up to 2,000 characters before it.
 */
const HOLD_CHARS = GUTENBERG_REACH + 4096;

/** Characters counted for the estimate a book is shown with until its whole text is read. */
const ESTIMATE_CHARS = 8192;

export interface StreamImport {
  id: string;
  /** Makes the file's SHA-256, kept with the record: asked once the whole text is read, not to slow the reading. */
  sha256(): Promise<string>;
  file: Blob & { name: string };
  tokenizer: Tokenizer;
  stripGutenberg: boolean;
  /** Waited for before each slice after the first part: a read that is starting goes first. */
  turn?(): Promise<void>;
  partChars?: number;
  /** The record is stored with its first part: `start` is the book's text so far. */
  onUsable(doc: DocumentRecord, start: string): void;
  /** Share of the file read and stored, 0 to 1. */
  onProgress(fraction: number): void;
}

/**
 * Imports a UTF-8 text or Markdown file as it is read, a slice at a time:
 * the document is committed with its first part as soon as that part (and the
 * text after it that could still be Project Gutenberg's footer) is decoded,
 * and the rest is written a part a transaction while the file is still being read. The
 * text, its parts, anchors and Gutenberg cut are exactly those of reading the
 * file whole (ingestBytes). Throws NotStreamable, before anything is stored
 * where it can tell, when the file must be read whole instead: other
 * encodings, binary data, text that starts with blank space and no START marker.
 */
export async function streamTextFile(store: Store, o: StreamImport): Promise<{ doc: DocumentRecord; text: string }> {
  const { file } = o;
  const partChars = o.partChars ?? PART_CHARS;
  const stream = new Utf8TextStream();
  /** The decoded text, in pieces: joined once at the end, for the anchors and the reader. */
  const pieces: string[] = [];
  let decoded = 0;
  let read = 0;
  const next = async () => {
    const bytes = new Uint8Array(await file.slice(read, read + (read ? SLICE_BYTES : FIRST_SLICE_BYTES)).arrayBuffer());
    read += bytes.length;
    const text = stream.push(bytes, read >= file.size);
    pieces.push(text);
    decoded += text.length;
    return bytes;
  };

  const head = await next();
  mark('stream-head');
  const format = formatOf(file.name, head);
  if ((format !== 'text' && format !== 'markdown') || startsWith(head, [0xff, 0xfe]) || startsWith(head, [0xfe, 0xff]) || hasNul(head) || binaryKind(head)) {
    throw new NotStreamable('not a UTF-8 text file');
  }
  // The START marker is looked for in the first GUTENBERG_REACH characters: they are read before anything is decided.
  while (decoded < GUTENBERG_REACH && read < file.size) await next();
  const opening = pieces.join('');
  if (controlShare(opening) > 0.01 || !/\S/.test(opening)) throw new NotStreamable('binary data or blank space');
  let start = 0;
  const marker = o.stripGutenberg ? gutenbergHead(opening) : null;
  if (marker !== null) {
    start = marker;
    while (start < opening.length && /\s/.test(opening[start]!)) start++;
    if (start === opening.length) throw new NotStreamable('blank space after the START marker');
  } else if (o.stripGutenberg && /\s/.test(opening[0]!)) {
    // Blank space is trimmed from the start only where a marker is found, and the END marker is found last.
    throw new NotStreamable('blank space before the text');
  }
  const header = opening.slice(0, start);

  /** Text of the book not yet written as parts, from part `written` on. */
  let pending = opening.slice(start);
  let written = 0;
  let record: DocumentRecord | null = null;
  // Text is held back only near the end: the rest of the file holds at least a character per 4 bytes.
  const full = () => pending.length >= partChars + Math.max(0, HOLD_CHARS - (file.size - read) / 4);
  const take = (parts: number) => {
    const out: string[] = [];
    for (let i = 0; i < parts; i++) out.push(pending.slice(i * partChars, (i + 1) * partChars));
    pending = pending.slice(parts * partChars);
    written += parts;
    return out;
  };
  const progress = () => o.onProgress(read / file.size);

  while (read < file.size || full()) {
    if (!full()) {
      // A read starting meanwhile goes first.
      if (record) await o.turn?.();
      await next();
      pending += pieces.at(-1)!;
      progress();
      if (record) await nextTask('background');
      continue;
    }
    if (!record) {
      const first = take(1)[0]!;
      const chars = Math.round(((decoded - start) * file.size) / read);
      record = {
        id: o.id,
        name: file.name,
        bytes: file.size,
        encoding: 'UTF-8',
        // Until the whole file is read, its length and tokens are estimated from what was read of it.
        chars,
        // From the book's first characters: the chunk a read starts with, whose tokens are then at hand.
        tokens: Math.round((o.tokenizer.count(first.slice(0, ESTIMATE_CHARS)) * chars) / Math.min(first.length, ESTIMATE_CHARS)),
        tokensEstimated: true,
        addedAt: Date.now(),
        format,
        partChars,
        importing: true,
      };
      const existing = await store.beginDocument(record, first, marker !== null ? { stripped: { header, footer: '' } } : {});
      if (existing) throw new Error(`a document is already stored as ${o.id}`);
      o.onUsable(record, first + pending);
    } else {
      await store.writeParts(record, written, take(1));
      progress();
    }
  }
  if (!record) throw new NotStreamable('short enough to read whole');

  const hashing = o.sha256();
  hashing.catch(() => undefined); // awaited below, once the text is cut and its anchors found
  // The whole file is decoded: where the book ends (before Project Gutenberg's footer) is found in what was kept back.
  const total = decoded;
  const tailAt = start + written * partChars;
  let end = total;
  const foot = o.stripGutenberg ? gutenbergFoot(pending, Math.max(start, total - GUTENBERG_REACH) - tailAt, start - tailAt) : null;
  if (foot !== null) end = tailAt + foot;
  const cut = marker !== null || foot !== null;
  if (cut) while (end > start && /\s/.test(pending[end - 1 - tailAt]!)) end--;
  const footer = pending.slice(end - tailAt);
  pending = pending.slice(0, end - tailAt);
  const last = take(Math.ceil(pending.length / partChars));

  const whole = pieces.join('');
  pieces.length = 0;
  let anchors = format === 'markdown' ? markdownAnchors(whole) : [];
  if (anchors.length === 0) anchors = chapterAnchors(whole);
  if (cut) anchors = cutAnchors(anchors, start, end);
  const text = cut ? whole.slice(start, end) : whole;
  const stripped: StrippedText | undefined = cut ? { header, footer } : undefined;
  const doc = await store.finishDocument(record, written - last.length, last, {
    changes: {
      chars: text.length,
      tokens: estimateTokens(text, o.tokenizer),
      anchors,
      sha256: await hashing,
      ...(stripped ? { stripped: { header: header.length, footer: footer.length } } : {}),
    },
    stripped,
  });
  o.onProgress(1);
  return { doc, text };
}

export { NotStreamable };
