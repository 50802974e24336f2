import type { Anchor } from '../core/anchors';
import { IngestError } from './errors';
import { chapterAnchors, type ReadDocument, TextBuilder } from './structure';

export interface PdfDocument extends ReadDocument {
  pages: number;
}

interface TextItem {
  str?: string;
  hasEOL?: boolean;
}

/**
 * pdf.js, loaded on first use. Its parser runs in this thread (our worker): the
 * worker module registers itself as `globalThis.pdfjsWorker`, which pdf.js uses
 * instead of starting a worker of its own. The legacy build also runs in
 * Node 20, so tests and the CLI read PDFs with the same code.
 */
let loading: Promise<typeof import('pdfjs-dist/legacy/build/pdf.mjs')> | undefined;
function loadPdfjs() {
  loading ??= (async () => {
    await import('pdfjs-dist/legacy/build/pdf.worker.mjs');
    return import('pdfjs-dist/legacy/build/pdf.mjs');
  })();
  return loading;
}

/**
 * A page's text items, read from pdf.js's stream with a reader: its own
 * getTextContent iterates the stream with `for await`, which WebKit's
 * ReadableStream does not support.
 */
async function textItems(page: { streamTextContent(): ReadableStream<{ items: unknown[] }> }): Promise<TextItem[]> {
  const reader = page.streamTextContent().getReader();
  const items: TextItem[] = [];
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return items;
    for (const item of value.items) items.push(item as TextItem);
  }
}

/**
 * A PDF → the text of its text layer, page by page in order, with an anchor at
 * the start of each page (its printed label where the PDF has page labels)
 * and chapter headings found in the text.
 */
export async function readPdf(bytes: Uint8Array, name: string, onProgress?: (done: number, total: number) => void): Promise<PdfDocument> {
  const what = `"${name}"`;
  const pdfjs = await loadPdfjs();
  // pdf.js takes over the buffer it is given.
  const task = pdfjs.getDocument({
    data: bytes,
    isEvalSupported: false,
    disableFontFace: true,
    useSystemFonts: false,
    enableXfa: false,
    verbosity: 0,
  });
  let doc;
  try {
    doc = await task.promise;
  } catch (e) {
    // Best effort: the open's own failure is what is reported.
    await task.destroy().catch(() => undefined);
    const err = e as { name?: string; message?: string };
    if (err.name === 'PasswordException') {
      throw new IngestError(`${what} is encrypted with a password, so its text cannot be read. Remove the password (print it to a new PDF) and try again.`);
    }
    if (err.name === 'InvalidPDFException') {
      throw new IngestError(`${what} is damaged or not a PDF: ${err.message ?? 'its structure cannot be read'}. Download the file again.`);
    }
    throw new IngestError(`${what} cannot be read as a PDF: ${err.message ?? String(e)}.`);
  }
  try {
    const labels = await doc.getPageLabels().catch(() => null);
    const out = new TextBuilder();
    const pageAnchors: Anchor[] = [];
    for (let n = 1; n <= doc.numPages; n++) {
      const page = await doc.getPage(n);
      let items: TextItem[];
      try {
        items = await textItems(page);
      } catch (e) {
        throw new IngestError(`${what} is damaged: page ${n} cannot be read (${(e as Error).message}).`);
      }
      out.line();
      pageAnchors.push({ at: out.size, kind: 'page', label: labels?.[n - 1]?.trim() || String(n) });
      let pageText = '';
      for (const item of items) {
        if (item.str !== undefined) pageText += item.str;
        if (item.hasEOL) pageText += '\n';
      }
      out.add(pageText.replace(/[ \t]+\n/g, '\n'));
      page.cleanup();
      onProgress?.(n, doc.numPages);
    }
    const built = out.build();
    if (!/\S/.test(built.text)) {
      throw new IngestError(
        `${what} has no text layer: its ${doc.numPages === 1 ? 'page is an image' : `${doc.numPages} pages are images`}, ` +
          'as in a scanned book. Run it through OCR (text recognition) first, then add it again.',
      );
    }
    const pages = pageAnchors.map((a) => (a.at > built.text.length ? { ...a, at: built.text.length } : a));
    const anchors = [...pages, ...chapterAnchors(built.text)].sort((a, b) => a.at - b.at);
    return { text: built.text, anchors, encoding: 'PDF text layer', pages: doc.numPages };
  } finally {
    // Best effort: the text is read; a document that cannot be freed is dropped with the task.
    await task.destroy().catch(() => undefined);
  }
}
