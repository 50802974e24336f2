import type { Anchor } from '../core/anchors';
import { normalizeText } from './text';

/** "chapter" → "(?:Chapter|CHAPTER)": headings are capitalised; prose that wraps onto "chapter 3 of…" is not. */
function cased(words: string): string {
  return `(?:${words
    .split('|')
    .flatMap((w) => [w[0]!.toUpperCase() + w.slice(1), w.toUpperCase()])
    .join('|')})`;
}

const NUMBER_WORDS =
  'one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen|seventeen|' +
  'eighteen|nineteen|twenty|first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|last';
const NUMBERED = `(?:\\d{1,4}|[IVXLCDM]{1,8}|[ivxlcdm]{1,8}|${cased(NUMBER_WORDS)})`;
// After the number: nothing, punctuation and a title, or a capitalised title ("Chapter 12: The Storm").
const TITLE = `(?:[ \\t]*[.:—–-][^\\n]{0,70}|[ \\t]+[\\p{Lu}"'“‘(\\[][^\\n]{0,70})?`;
const ORDINALS = 'first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|last';
// A heading line: "Chapter 12", "CHAPTER XII. The Storm", "Letter 4", "Book II", "FIRST EPILOGUE: 1813 - 20", "Preface", "第十二章 …".
const HEADING_SOURCE =
  `(?:${cased('book|part|volume|chapter|letter|act|stave|canto|scene|section')}[ \\t]+${NUMBERED}(?![\\p{L}\\p{N}])${TITLE}` +
  `|${cased(ORDINALS)}[ \\t]+${cased('book|part|volume|epilogue')}(?![\\p{L}\\p{N}])${TITLE}` +
  `|${cased('prologue|epilogue|preface|introduction|afterword|appendix|contents')}(?:[ \\t]+(?:[A-Z]|\\d{1,3}))?[.:]?` +
  `|第[0-9０-９一二三四五六七八九十百千零〇两]{1,6}[章回節节卷部篇幕話话][^\\n]{0,70})`;
const HEADING_LINE = new RegExp(`^[ \\t]*(${HEADING_SOURCE})[ \\t]*$`, 'gmu');
const NON_SPACE = /\S/g;
// The closing #s are trimmed by hand: a lazy `(.+?)[ \t#]*$` backtracks quadratically on a long line of #s and spaces.
const MARKDOWN_HEADING = /^(#{1,6})[ \t]+(.+)$/gmu;
const CLOSING_HASHES = /[ \t#]/;
const FENCE = /^(```|~~~)/gmu;

// Headings of parts that hold chapters. "Second Epilogue" is one, as a book is; a lone "Epilogue" is a chapter. "第一卷" too.
const PART_LABEL = new RegExp(`^(?:(?:${ORDINALS})\\s+)?(?:book|part|volume)\\b|^(?:${ORDINALS})\\s+epilogue\\b|^第[^\\s章回節节]{1,6}[卷部篇]`, 'iu');

function levelOf(label: string): number {
  if (PART_LABEL.test(label)) return 1;
  if (/^(scene|section)\b/i.test(label)) return 3;
  return 2;
}

const TRAILING = /[\s.:;,—–-]/u;

/** A heading's text as a label: one line, no trailing punctuation, not too long. */
export function cleanLabel(s: string): string {
  const one = s.replace(/\s+/g, ' ').trim();
  // Trailing punctuation is trimmed by hand: `/[…]+$/` is quadratic on a long run of it (". . . . x").
  let end = one.length;
  while (end > 0 && TRAILING.test(one[end - 1]!)) end--;
  return end > 80 ? `${one.slice(0, 79)}…` : one.slice(0, end);
}

/**
 * Chapter headings found in plain text, as anchors. A heading must stand on a
 * line of its own. Three or more headings with only blank space between them
 * are a table of contents, not the chapters, and are skipped; a label that
 * repeats inside such a list starts the book itself, with the headings of the
 * parts just before it.
 */
export function chapterAnchors(text: string, base = 0): Anchor[] {
  const anchors: Anchor[] = [];
  let segment: Anchor[] = [];
  // Keys of the segment, so that a run of thousands of heading lines stays linear.
  let keys = new Set<string>();
  let previousEnd = -1;
  const flush = (carried: Anchor[] = []) => {
    if (segment.length < 3) anchors.push(...segment);
    segment = carried;
    keys = new Set(carried.map((a) => a.label.toLowerCase()));
  };
  for (const m of text.matchAll(HEADING_LINE)) {
    const label = cleanLabel(m[1]!);
    const key = label.toLowerCase();
    const level = levelOf(label);
    let adjacent = false;
    if (previousEnd >= 0) {
      NON_SPACE.lastIndex = previousEnd;
      const next = NON_SPACE.exec(text);
      adjacent = !next || next.index >= m.index;
    }
    if (!adjacent) flush();
    else if (keys.has(key)) {
      // The book starts here, with the part headings just before it: "BOOK ONE: 1805" above its "CHAPTER I" after the contents.
      let cut = segment.length;
      while (cut > 0 && segment[cut - 1]!.level! < level) cut--;
      flush(segment.splice(cut));
    }
    const lead = m[0].length - m[0].trimStart().length;
    segment.push({ at: base + m.index + lead, kind: 'chapter', label, level });
    keys.add(key);
    previousEnd = m.index + m[0].length;
  }
  flush();
  return anchors;
}

/** ATX headings (# Title) of a Markdown text, outside code fences, as anchors. */
export function markdownAnchors(text: string): Anchor[] {
  const fences = [...text.matchAll(FENCE)].map((m) => m.index);
  // Headings come in order, so the fences before each are counted once, not again for every heading.
  let passed = 0;
  const anchors: Anchor[] = [];
  for (const m of text.matchAll(MARKDOWN_HEADING)) {
    while (passed < fences.length && fences[passed]! < m.index) passed++;
    if (passed % 2 === 1) continue;
    const rest = m[2]!;
    let end = rest.length;
    while (end > 1 && CLOSING_HASHES.test(rest[end - 1]!)) end--;
    anchors.push({ at: m.index, kind: 'heading', label: cleanLabel(rest.slice(0, end)), level: m[1]!.length });
  }
  return anchors;
}

/** What each format's reader returns. */
export interface ReadDocument {
  text: string;
  anchors: Anchor[];
  title?: string;
  encoding: string;
}

/**
 * Builds a document's text from parts (paragraphs, headings, pages) and keeps
 * anchors pointing into it. Each part is normalised as it is added, so offsets
 * are offsets into the final text.
 */
export class TextBuilder {
  private readonly parts: string[] = [];
  private length = 0;
  private tail = '';
  readonly anchors: Anchor[] = [];

  /** Adds running text as it is. */
  add(text: string): void {
    if (!text) return;
    const t = normalizeText(text);
    this.parts.push(t);
    this.length += t.length;
    this.tail = (this.tail + t).slice(-2);
  }

  /** Ends the current paragraph: what follows starts after a blank line. */
  paragraph(): void {
    if (this.length === 0 || this.tail.endsWith('\n\n')) return;
    this.add(this.tail.endsWith('\n') ? '\n' : '\n\n');
  }

  /** Ends the current line. */
  line(): void {
    if (this.length > 0 && !this.tail.endsWith('\n')) this.add('\n');
  }

  /** Marks the place where the next text starts. */
  anchor(kind: Anchor['kind'], label: string, level?: number): void {
    const a: Anchor = { at: this.length, kind, label };
    if (level !== undefined) a.level = level;
    this.anchors.push(a);
  }

  endsWithSpace(): boolean {
    return /\s$/.test(this.tail);
  }

  get size(): number {
    return this.length;
  }

  /** The text with trailing blank space removed, and anchors that point into it. */
  build(): { text: string; anchors: Anchor[] } {
    const text = this.parts.join('').trimEnd();
    const anchors = this.anchors.map((a) => (a.at > text.length ? { ...a, at: text.length } : a)).sort((a, b) => a.at - b.at);
    return { text, anchors };
  }
}
