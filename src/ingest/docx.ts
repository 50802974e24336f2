import { IngestError } from './errors';
import { cleanLabel, type ReadDocument, TextBuilder } from './structure';
import { walkXml } from './xml';
import { ZipArchive, type ZipLimits } from './zip';

/** Heading level of a paragraph style: "Heading 2" → 2, "Title" → 1. */
function headingLevel(styleName: string): number | null {
  const m = /^heading\s*(\d)$/i.exec(styleName.trim());
  if (m) return Number(m[1]);
  return /^title$/i.test(styleName.trim()) ? 1 : null;
}

/**
 * A Word document (.docx) → its paragraphs' text, with paragraphs in heading
 * styles as anchors. WordprocessingML is read directly: text runs (w:t), tabs
 * and breaks; deleted revisions and field codes are not text.
 */
export function readDocx(bytes: Uint8Array, name: string, limits: ZipLimits): ReadDocument {
  const what = `"${name}"`;
  const zip = ZipArchive.open(bytes, what, limits);
  if (!zip) throw new IngestError(`${what} is not a valid Word document: a .docx file is a ZIP archive, and this file is not one.`);
  let mainPath = 'word/document.xml';
  const rels = zip.readText('_rels/.rels');
  if (rels) {
    walkXml(rels, {
      open(tag, attrs) {
        if (tag === 'relationship' && /officeDocument$/.test(attrs.type ?? '') && attrs.target) {
          mainPath = attrs.target.replace(/^\//, '');
        }
      },
    });
  }
  const xml = zip.readText(mainPath);
  if (!xml) throw new IngestError(`${what} is not a valid Word document: it has no main document part. Save it again from Word.`);

  // Style ids ("Heading1", or localised ids) → heading level, by the style's name.
  const levels = new Map<string, number>();
  const styles = zip.readText('word/styles.xml');
  if (styles) {
    let styleId = '';
    walkXml(styles, {
      open(tag, attrs) {
        if (tag === 'style') styleId = attrs.styleid ?? '';
        else if (tag === 'name' && styleId) {
          const level = headingLevel(attrs.val ?? '');
          if (level) levels.set(styleId, level);
        }
      },
    });
  }

  const out = new TextBuilder();
  let paragraph = '';
  let level: number | null = null;
  let inText = false;
  walkXml(xml, {
    open(tag, attrs) {
      if (tag === 'p') {
        paragraph = '';
        level = null;
      } else if (tag === 'pstyle') {
        level = levels.get(attrs.val ?? '') ?? headingLevel(attrs.val?.replace(/(\d)$/, ' $1') ?? '');
      } else if (tag === 'outlinelvl' && level === null && attrs.val !== undefined) {
        const n = Number(attrs.val);
        if (n >= 0 && n < 9) level = n + 1;
      } else if (tag === 't') inText = true;
      else if (tag === 'tab') paragraph += '\t';
      else if (tag === 'br' || tag === 'cr') paragraph += '\n';
    },
    text(t) {
      if (inText) paragraph += t;
    },
    close(tag) {
      if (tag === 't') inText = false;
      else if (tag === 'p') {
        if (!/\S/.test(paragraph)) return;
        out.paragraph();
        const label = cleanLabel(paragraph);
        if (level !== null && label) out.anchor('heading', label, level);
        out.add(paragraph.trim());
      }
    },
  });
  const built = out.build();
  if (!/\S/.test(built.text)) throw new IngestError(`${what} holds no text.`);
  return { ...built, encoding: 'UTF-8' };
}
