import { type Anchor, cutAnchors } from '../core/anchors';
import { binaryKind, startsWith, SUPPORTED } from './charset';
import { IngestError } from './errors';
import { hashBytes } from './hash';
import { findGutenberg } from './gutenberg';
import { chapterAnchors, markdownAnchors } from './structure';
import { decodeText } from './text';

export { IngestError };

export type DocumentFormat = 'text' | 'markdown' | 'html' | 'epub' | 'pdf' | 'docx';

export interface IngestedText {
  name: string;
  /** SHA-256 of the bytes, hex: the document's identity. */
  hash: string;
  bytes: number;
  format: DocumentFormat;
  encoding: string;
  text: string;
  /** Chapters, headings and pages, sorted by offset into `text`. */
  anchors: Anchor[];
  pages?: number;
  title?: string;
  /** What was cut away as Project Gutenberg's header and footer. */
  stripped?: { header: string; footer: string };
}

export interface IngestProgress {
  /** What is being done, for people: "Reading pages". */
  stage: string;
  /** 0 to 1 within the stage. */
  fraction: number;
}

export interface IngestOptions {
  /** Cut Project Gutenberg's header and footer where its markers are found (default true). */
  stripGutenberg?: boolean;
  /** Most bytes an EPUB or DOCX may expand to (default: 50× the file, 64 MiB to 1 GiB). */
  maxUnzippedBytes?: number;
  /** The bytes' SHA-256 where the caller has it already, or is having it made elsewhere while the bytes are read. */
  hash?: string | Promise<string>;
  /**
   * The caller gives the bytes up: reading may rewrite them. A text file's line
   * ends are then normalised in the bytes before they are decoded, so that a
   * large file is held as bytes and text together once, never as two texts.
   */
  consumeBytes?: boolean;
  onProgress?(progress: IngestProgress): void;
}

/** The default cap on what an EPUB or DOCX may expand to: 50 times the archive, at least 64 MiB, at most 1 GiB. */
export function defaultZipLimit(archiveBytes: number): number {
  return Math.min(1024 * 1024 * 1024, Math.max(64 * 1024 * 1024, archiveBytes * 50));
}

/** The largest file read at all: its text must fit in one string, beside its bytes, in one tab. */
export const MAX_FILE_BYTES = 256 * 1024 * 1024;

/** The refusal for a file of `size` bytes that is empty or too large to read, or null. */
export function sizeRefusal(name: string, size: number): IngestError | null {
  if (size === 0) return new IngestError(`"${name}" is empty (0 bytes). Choose a file that contains the text of a book.`);
  if (size <= MAX_FILE_BYTES) return null;
  // Just over the limit, megabytes would round to the limit itself: say it in bytes.
  const mb = Math.round(size / 1024 / 1024);
  const told = mb > MAX_FILE_BYTES / 1024 / 1024 ? `${mb} MB` : `${size.toLocaleString('en')} bytes`;
  return new IngestError(
    `"${name}" is ${told}; the largest file this app reads is ` +
      `${MAX_FILE_BYTES / 1024 / 1024} MB (${MAX_FILE_BYTES.toLocaleString('en')} bytes). Split the book into parts and add them one by one.`,
  );
}

const EXTENSIONS: Record<string, DocumentFormat> = {
  txt: 'text',
  text: 'text',
  md: 'markdown',
  markdown: 'markdown',
  html: 'html',
  htm: 'html',
  xhtml: 'html',
  epub: 'epub',
  pdf: 'pdf',
  docx: 'docx',
};

/** The format a file's name says (its extension), if it names one this app reads. */
export function formatByName(name: string): DocumentFormat | undefined {
  const ext = name.includes('.') ? name.split('.').pop()!.toLowerCase() : '';
  return EXTENSIONS[ext];
}

const PDF = [0x25, 0x50, 0x44, 0x46];
const ZIP = [0x50, 0x4b, 0x03, 0x04];
const EMPTY_ZIP = [0x50, 0x4b, 0x05, 0x06];
const OLE = [0xd0, 0xcf, 0x11, 0xe0];

/** The format by content first (a PDF named .txt is still a PDF), then by extension. */
export function formatOf(name: string, bytes: Uint8Array): DocumentFormat {
  const byName = formatByName(name);
  // "%PDF" may follow a little junk; pdf.js looks in the first kilobyte too.
  const head = new TextDecoder('latin1').decode(bytes.subarray(0, 1024));
  if (startsWith(bytes, PDF) || (byName === 'pdf' && head.includes('%PDF-'))) return 'pdf';
  if (startsWith(bytes, ZIP) || startsWith(bytes, EMPTY_ZIP)) {
    if (byName === 'epub' || byName === 'docx') return byName;
    if (head.includes('mimetypeapplication/epub+zip')) return 'epub';
    if (head.includes('[Content_Types].xml') || head.includes('word/')) return 'docx';
    throw new IngestError(`"${name}" is a ZIP archive, not a book. ${SUPPORTED}`);
  }
  if (startsWith(bytes, OLE)) {
    throw new IngestError(
      byName === 'docx'
        ? `"${name}" is encrypted with a password (or is an old .doc file). Remove the password in Word, save as .docx, and try again.`
        : `"${name}" is an old Microsoft Office file (.doc, .xls). Save it as .docx or plain text and try again.`,
    );
  }
  if (byName === 'pdf') throw new IngestError(`"${name}" is damaged or not a PDF: it does not start like one. Download the file again.`);
  if (byName === 'epub') {
    throw new IngestError(`"${name}" is not a valid EPUB: an EPUB is a ZIP archive, and this file is not one.`);
  }
  if (byName === 'docx') {
    throw new IngestError(`"${name}" is not a valid Word document: a .docx file is a ZIP archive, and this file is not one.`);
  }
  if (byName === 'html') return 'html';
  if (byName === 'markdown') return 'markdown';
  if (!byName && !binaryKind(bytes) && /^\s*(<!doctype html|<html[\s>])/i.test(head.replace(/^\uFEFF|^ï»¿/, ''))) return 'html';
  return 'text';
}

export { hashBytes };

/**
 * A file's bytes → its text and structure, or an IngestError that says why not
 * and what to do. Heavy readers (pdf.js, the HTML and ZIP readers) load on first use.
 */
export async function ingestBytes(name: string, bytes: Uint8Array<ArrayBuffer>, options: IngestOptions = {}): Promise<IngestedText> {
  const progress = (stage: string, fraction: number) => options.onProgress?.({ stage, fraction });
  const refusal = sizeRefusal(name, bytes.length);
  if (refusal) throw refusal;
  const format = formatOf(name, bytes);
  // pdf.js takes over (detaches) the buffer it reads, and the text reader may rewrite it: the hash is
  // begun first (WebCrypto copies the bytes it is given) and awaited once the text is read.
  const hashing = options.hash ?? hashBytes(bytes);
  const limits = { maxBytes: options.maxUnzippedBytes ?? defaultZipLimit(bytes.length) };
  const bytesLength = bytes.length;
  progress('Reading', 0);

  let text: string;
  let anchors: Anchor[];
  let encoding: string;
  let pages: number | undefined;
  let title: string | undefined;
  switch (format) {
    case 'pdf': {
      const { readPdf } = await import('./pdf');
      const doc = await readPdf(bytes, name, (done, total) => progress('Reading pages', done / total));
      ({ text, anchors, encoding, pages } = doc);
      break;
    }
    case 'epub': {
      const { readEpub } = await import('./epub');
      ({ text, anchors, encoding, title } = readEpub(bytes, name, limits, (done, total) => progress('Reading chapters', done / total)));
      break;
    }
    case 'docx': {
      const { readDocx } = await import('./docx');
      ({ text, anchors, encoding } = readDocx(bytes, name, limits));
      break;
    }
    case 'html': {
      const { readHtml } = await import('./html-document');
      ({ text, anchors, encoding, title } = readHtml(bytes, name));
      break;
    }
    default: {
      ({ text, encoding } = decodeText(bytes, name, { inPlace: options.consumeBytes ?? false }));
      anchors = format === 'markdown' ? markdownAnchors(text) : [];
      if (anchors.length === 0) anchors = chapterAnchors(text);
    }
  }
  progress('Reading', 1);

  let stripped: IngestedText['stripped'];
  if (options.stripGutenberg ?? true) {
    const cut = findGutenberg(text);
    if (cut && /\S/.test(text.slice(cut.start, cut.end))) {
      stripped = { header: cut.header, footer: cut.footer };
      anchors = cutAnchors(anchors, cut.start, cut.end);
      text = text.slice(cut.start, cut.end);
    }
  }
  const doc: IngestedText = { name, hash: await hashing, bytes: bytesLength, format, encoding, text, anchors };
  if (pages !== undefined) doc.pages = pages;
  if (title) doc.title = title;
  if (stripped) doc.stripped = stripped;
  return doc;
}
