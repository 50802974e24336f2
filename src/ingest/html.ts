import { Parser } from 'htmlparser2';
import type { Anchor } from '../core/anchors';
import { decodeBytes, decodeWith, startsWith } from './charset';
import { cleanLabel, TextBuilder } from './structure';
import { MAX_NESTING, nestingError } from './xml';

// Never text: scripts and styles are dropped unread (nothing here runs them), and so is the head.
const SKIP = new Set(['script', 'style', 'noscript', 'template', 'head', 'svg', 'math', 'iframe', 'object', 'canvas', 'select', 'button']);
const BLOCK = new Set([
  'address',
  'article',
  'aside',
  'blockquote',
  'body',
  'caption',
  'dd',
  'details',
  'dialog',
  'div',
  'dl',
  'dt',
  'fieldset',
  'figcaption',
  'figure',
  'footer',
  'form',
  'header',
  'hgroup',
  'hr',
  'html',
  'legend',
  'li',
  'main',
  'nav',
  'ol',
  'p',
  'pre',
  'section',
  'summary',
  'table',
  'tbody',
  'thead',
  'tfoot',
  'tr',
  'ul',
  'h1',
  'h2',
  'h3',
  'h4',
  'h5',
  'h6',
]);
const HEADING = /^h([1-6])$/;

export interface HtmlOptions {
  /** Record the text offset of every element with an id (for EPUB tables of contents). */
  ids?: Map<string, number>;
  /** Add h1–h6 as heading anchors. */
  headings?: boolean;
}

/**
 * Appends the readable text of an HTML or XHTML document to `out`. The markup
 * is only tokenised (htmlparser2, no DOM): scripts, styles and event handlers
 * are never executed, and their text is dropped.
 */
export function appendHtml(html: string, out: TextBuilder, options: HtmlOptions = {}): { title: string } {
  let skipDepth = 0;
  let preDepth = 0;
  let space = false; // whitespace seen since the last word, not yet written
  let heading: { anchor: Anchor; text: string } | null = null;
  let title = '';
  let inTitle = false;
  let depth = 0;

  const parser = new Parser(
    {
      onopentag(name, attribs) {
        if (++depth > MAX_NESTING) throw nestingError();
        if (name === 'title') inTitle = true;
        if (skipDepth > 0 || SKIP.has(name)) {
          if (SKIP.has(name)) skipDepth++;
          return;
        }
        if (BLOCK.has(name)) {
          out.paragraph();
          space = false;
        } else if (name === 'br') {
          out.line();
          space = false;
        } else if (name === 'td' || name === 'th') {
          space = true;
        }
        if (name === 'pre') preDepth++;
        if (attribs.id && options.ids && !options.ids.has(attribs.id)) options.ids.set(attribs.id, out.size);
        const h = HEADING.exec(name);
        if (h && options.headings && !heading) {
          const anchor: Anchor = { at: out.size, kind: 'heading', label: '', level: Number(h[1]) };
          heading = { anchor, text: '' };
        }
      },
      ontext(data) {
        if (inTitle) title += data;
        if (skipDepth > 0) return;
        if (preDepth > 0) {
          out.add(data);
          if (heading) heading.text += data;
          return;
        }
        const words = data.split(/[ \t\n\r\f]+/);
        for (let i = 0; i < words.length; i++) {
          const w = words[i]!;
          if (i > 0) space = true;
          if (!w) continue;
          if (space && out.size > 0 && !out.endsWithSpace()) out.add(' ');
          out.add(w);
          if (heading) heading.text += (space && heading.text ? ' ' : '') + w;
          space = false;
        }
      },
      onclosetag(name) {
        depth--;
        if (name === 'title') inTitle = false;
        if (SKIP.has(name)) {
          if (skipDepth > 0) skipDepth--;
          return;
        }
        if (skipDepth > 0) return;
        if (name === 'pre' && preDepth > 0) preDepth--;
        if (HEADING.test(name) && heading) {
          const label = cleanLabel(heading.text);
          if (label) out.anchors.push({ ...heading.anchor, label });
          heading = null;
        }
        if (BLOCK.has(name)) {
          out.paragraph();
          space = false;
        }
      },
    },
    { decodeEntities: true, recognizeSelfClosing: true },
  );
  parser.write(html);
  parser.end();
  return { title: cleanLabel(title) };
}

/** The charset an HTML file declares in its first bytes, if any. */
export function declaredCharset(bytes: Uint8Array): string | null {
  const head = new TextDecoder('windows-1252').decode(bytes.subarray(0, 2048));
  const m = /<meta[^>]+charset\s*=\s*["']?\s*([\w.:-]+)/i.exec(head) ?? /<\?xml[^>]+encoding\s*=\s*["']([\w.:-]+)/i.exec(head);
  if (!m) return null;
  try {
    return new TextDecoder(m[1]!).encoding;
  } catch {
    return null;
  }
}

/** HTML bytes → text: a BOM, then a declared charset, then detection decide the encoding. */
export function decodeHtml(bytes: Uint8Array, name: string): { html: string; encoding: string } {
  const declared = declaredCharset(bytes);
  const bom = startsWith(bytes, [0xef, 0xbb, 0xbf]) || startsWith(bytes, [0xff, 0xfe]) || startsWith(bytes, [0xfe, 0xff]);
  // UTF-16 declared in a file that reads as ASCII is a mistake in the file: trust the bytes.
  if (declared && !bom && !declared.startsWith('utf-16')) {
    return { html: decodeWith(declared, bytes), encoding: declared === 'utf-8' ? 'UTF-8' : declared };
  }
  const { text, encoding } = decodeBytes(bytes, name);
  return { html: text, encoding };
}
