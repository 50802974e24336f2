import { IngestError } from './errors';
import { appendHtml, decodeHtml } from './html';
import { cleanLabel, type ReadDocument, TextBuilder } from './structure';
import { walkXml } from './xml';
import { ZipArchive, type ZipLimits } from './zip';

interface TocEntry {
  path: string;
  fragment: string;
  label: string;
  level: number;
}

// Font obfuscation (IDPF and Adobe) is the only "encryption" an unprotected EPUB may carry.
const FONT_OBFUSCATION = new Set(['http://www.idpf.org/2008/embedding', 'http://ns.adobe.com/pdf/enc#RC']);

/** Resolves `href` (URL-encoded, relative to the file `base`) to a path inside the archive. */
export function resolvePath(base: string, href: string): string {
  const parts = base.split('/').slice(0, -1);
  let decoded = href;
  try {
    decoded = decodeURIComponent(href);
  } catch {
    // keep the href as written
  }
  for (const p of decoded.split('/')) {
    if (p === '..') parts.pop();
    else if (p && p !== '.') parts.push(p);
  }
  return parts.join('/');
}

function splitHref(base: string, href: string): { path: string; fragment: string } {
  const hash = href.indexOf('#');
  const file = hash < 0 ? href : href.slice(0, hash);
  return { path: file ? resolvePath(base, file) : base, fragment: hash < 0 ? '' : href.slice(hash + 1) };
}

/**
 * EPUB 2 or 3 → its text in spine (reading) order, with the table of
 * contents' titles as chapter anchors. DRM-protected books are refused.
 */
export function readEpub(bytes: Uint8Array, name: string, limits: ZipLimits, onProgress?: (done: number, total: number) => void): ReadDocument {
  const what = `"${name}"`;
  const zip = ZipArchive.open(bytes, what, limits);
  if (!zip) throw new IngestError(`${what} is not a valid EPUB: an EPUB is a ZIP archive, and this file is not one.`);
  refuseDrm(zip, what);

  const container = zip.readText('META-INF/container.xml');
  let opfPath = '';
  if (container) {
    walkXml(container, {
      open(tag, attrs) {
        if (tag === 'rootfile' && !opfPath && (attrs['media-type'] ?? 'application/oebps-package+xml').includes('oebps')) {
          opfPath = attrs['full-path'] ?? '';
        }
      },
    });
  }
  opfPath ||= zip.names().find((n) => n.toLowerCase().endsWith('.opf')) ?? '';
  const opf = opfPath ? zip.readText(opfPath) : undefined;
  if (!opf) throw new IngestError(`${what} is not a valid EPUB: it has no package document (.opf). Download the book again.`);

  const manifest = new Map<string, { path: string; type: string; properties: string }>();
  const spine: string[] = [];
  let ncxId = '';
  let title = '';
  let inTitle = false;
  walkXml(opf, {
    open(tag, attrs) {
      if (tag === 'item' && attrs.id && attrs.href) {
        manifest.set(attrs.id, {
          path: resolvePath(opfPath, attrs.href),
          type: attrs['media-type'] ?? '',
          properties: attrs.properties ?? '',
        });
      } else if (tag === 'itemref' && attrs.idref) {
        spine.push(attrs.idref);
      } else if (tag === 'spine') {
        ncxId = attrs.toc ?? '';
      } else if (tag === 'title' && !title) {
        inTitle = true;
      }
    },
    text(t) {
      if (inTitle) title += t;
    },
    close(tag) {
      if (tag === 'title') inTitle = false;
    },
  });

  const toc = readToc(zip, manifest, ncxId);
  const tocByPath = new Map<string, TocEntry[]>();
  for (const e of toc) {
    const list = tocByPath.get(e.path);
    if (list) list.push(e);
    else tocByPath.set(e.path, [e]);
  }

  const out = new TextBuilder();
  // A file listed twice in the spine is read once: EPUB forbids repeats, and a spine of 100,000 repeats would stall the reader.
  const seen = new Set<string>();
  const files = spine.map((id) => manifest.get(id)).filter((f) => f && /x?html|xml/.test(f.type) && !seen.has(f.path) && seen.add(f.path));
  let encoding = 'UTF-8';
  files.forEach((file, i) => {
    const bytes = zip.read(file!.path);
    if (!bytes) return;
    const decoded = decodeHtml(bytes, file!.path);
    encoding = decoded.encoding;
    out.paragraph();
    const start = out.size;
    const ids = new Map<string, number>();
    // Headings inside the pages stand in for a table of contents only where the book has none.
    appendHtml(decoded.html, out, { ids, headings: toc.length === 0 });
    for (const entry of tocByPath.get(file!.path) ?? []) {
      const at = entry.fragment ? (ids.get(entry.fragment) ?? start) : start;
      out.anchors.push({ at, kind: 'chapter', label: entry.label, level: entry.level });
    }
    onProgress?.(i + 1, files.length);
  });
  const built = out.build();
  if (!/\S/.test(built.text)) {
    throw new IngestError(`${what} holds no readable text: its pages may be images only.`);
  }
  return { ...built, title: cleanLabel(title) || undefined, encoding };
}

function refuseDrm(zip: ZipArchive, what: string): void {
  const drm = `${what} is protected by DRM (digital rights management), so its text cannot be read. ` + 'Use a DRM-free copy of the book.';
  if (zip.has('META-INF/rights.xml') || zip.has('META-INF/sinf.xml')) throw new IngestError(drm);
  const encryption = zip.readText('META-INF/encryption.xml');
  if (!encryption) return;
  let protectedContent = false;
  walkXml(encryption, {
    open(tag, attrs) {
      if (tag === 'encryptionmethod' && !FONT_OBFUSCATION.has(attrs.algorithm ?? '')) protectedContent = true;
    },
  });
  if (protectedContent) throw new IngestError(drm);
}

/** Table of contents: EPUB 3's nav document, else EPUB 2's NCX; flattened, in order. */
function readToc(zip: ZipArchive, manifest: Map<string, { path: string; type: string; properties: string }>, ncxId: string): TocEntry[] {
  const nav = [...manifest.values()].find((m) => m.properties.split(/\s+/).includes('nav'));
  const navText = nav && zip.readText(nav.path);
  if (nav && navText) {
    const entries = readNav(navText, nav.path);
    if (entries.length) return entries;
  }
  const ncx = manifest.get(ncxId) ?? [...manifest.values()].find((m) => m.type === 'application/x-dtbncx+xml');
  const ncxText = ncx && zip.readText(ncx.path);
  return ncx && ncxText ? readNcx(ncxText, ncx.path) : [];
}

function readNav(xhtml: string, base: string): TocEntry[] {
  const entries: TocEntry[] = [];
  let navDepth = 0;
  let inToc = false;
  let listDepth = 0;
  let link: { href: string; text: string } | null = null;
  walkXml(xhtml, {
    open(tag, attrs) {
      if (tag === 'nav') {
        navDepth++;
        if (navDepth === 1) inToc = (attrs.type ?? '').split(/\s+/).includes('toc');
      } else if (inToc && tag === 'ol') listDepth++;
      else if (inToc && tag === 'a') link = { href: attrs.href ?? '', text: '' };
    },
    text(t) {
      if (link) link.text += t;
    },
    close(tag) {
      if (tag === 'nav') {
        navDepth--;
        if (navDepth === 0) inToc = false;
      } else if (inToc && tag === 'ol') listDepth--;
      else if (tag === 'a' && link) {
        const label = cleanLabel(link.text);
        if (label && link.href) entries.push({ ...splitHref(base, link.href), label, level: Math.max(1, listDepth) });
        link = null;
      }
    },
  });
  return entries;
}

function readNcx(xml: string, base: string): TocEntry[] {
  const entries: TocEntry[] = [];
  const stack: { label: string; src: string; level: number }[] = [];
  let inText = false;
  walkXml(xml, {
    open(tag, attrs) {
      if (tag === 'navpoint') stack.push({ label: '', src: '', level: stack.length + 1 });
      else if (tag === 'text' && stack.length) inText = true;
      else if (tag === 'content' && stack.length) {
        const top = stack[stack.length - 1]!;
        top.src ||= attrs.src ?? '';
        // A navPoint is listed as soon as its target is known, so parents come before children.
        const label = cleanLabel(top.label);
        if (label && top.src) entries.push({ ...splitHref(base, top.src), label, level: top.level });
      }
    },
    text(t) {
      if (inText) stack[stack.length - 1]!.label += t;
    },
    close(tag) {
      if (tag === 'text') inText = false;
      else if (tag === 'navpoint') stack.pop();
    },
  });
  return entries;
}
