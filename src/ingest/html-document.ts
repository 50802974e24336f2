import { IngestError } from './errors';
import { appendHtml, decodeHtml } from './html';
import { chapterAnchors, type ReadDocument, TextBuilder } from './structure';

/** An .html/.htm file → its text, with h1–h6 as heading anchors (chapter lines where it has none). */
export function readHtml(bytes: Uint8Array, name: string): ReadDocument {
  const { html, encoding } = decodeHtml(bytes, name);
  const out = new TextBuilder();
  const { title } = appendHtml(html, out, { headings: true });
  const built = out.build();
  if (!/\S/.test(built.text)) {
    throw new IngestError(`"${name}" holds no readable text: only markup${/<script/i.test(html) ? ' and scripts' : ''}.`);
  }
  const anchors = built.anchors.length ? built.anchors : chapterAnchors(built.text);
  return { ...built, anchors, title: title || undefined, encoding };
}
