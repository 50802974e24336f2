/**
 * Where a place in a document is: chapters, headings and pages, each an offset
 * into the document's text. Ingest writes them; the inspector reads them.
 */
export type AnchorKind = 'chapter' | 'heading' | 'page' | 'book';

export interface Anchor {
  /** Offset into the document's text where this chapter, heading or page starts. */
  at: number;
  kind: AnchorKind;
  /** "Chapter 12" for a chapter or heading; the page number ("143") for a page; the title for a book of a set (see core/book-set). */
  label: string;
  /** 1 for the outermost headings; pages have none. */
  level?: number;
}

/** How many of `items`, sorted by `at`, start at or before `offset` (a binary search). */
export function countAtOrBefore<T>(items: readonly T[], offset: number, at: (item: T) => number): number {
  let lo = 0;
  let hi = items.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (at(items[mid]!) <= offset) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The book (in a set), chapter (or heading) and page that hold `offset`; each absent when not known. */
export function anchorsAt(anchors: readonly Anchor[], offset: number): { book?: Anchor; section?: Anchor; page?: Anchor } {
  let book: Anchor | undefined;
  let section: Anchor | undefined;
  let page: Anchor | undefined;
  // Anchors are sorted by offset: the last of each kind at or before `offset` holds it.
  const lo = countAtOrBefore(anchors, offset, (a) => a.at);
  // A chapter or page of an earlier book of a set does not hold a place in a later one: the search stops at the book.
  for (let i = lo - 1; i >= 0 && !book; i--) {
    const a = anchors[i]!;
    if (a.kind === 'book') book = a;
    else if (a.kind === 'page') page ??= a;
    else section ??= a;
  }
  return { book, section, page };
}

/**
 * Where `offset` is, in words: "Persuasion · Chapter 4, p. 31" in a set of
 * books, "Chapter 12, p. 143", "Chapter 12" or "p. 143" in one book, "" where
 * nothing is known; in a book whose chapters restart, with the parts that hold
 * the chapter: "BOOK ONE, CHAPTER IX" (see sectionName). Every place the app
 * names goes through this one function.
 */
export function describePlace(anchors: readonly Anchor[], offset: number): string {
  const { book, section, page } = anchorsAt(anchors, offset);
  const within = [section && sectionName(anchors, section).name, page && `p. ${page.label}`].filter(Boolean).join(', ');
  return [book?.label, within].filter(Boolean).join(' · ');
}

/**
 * Where a section (a chunk, characters [start, end)) is, in words: the place it starts in, and where a chapter or
 * book begins inside it, the last it reaches: "Letter 4 – Chapter 1". The revision list and the section pane name a
 * section's place with this one function, so they agree; a source names its sentence's own place (sourcePlace).
 */
export function sectionPlace(anchors: readonly Anchor[], start: number, end: number): string {
  const from = describePlace(anchors, start);
  const first = anchorsAt(anchors, start);
  const last = anchorsAt(anchors, Math.max(start, end - 1));
  if (last.book === first.book && last.section === first.section) return from;
  // Within the same part, the chapter reached is named alone: "BOOK ONE, CHAPTER IX – CHAPTER X".
  const lastName = last.section && sectionName(anchors, last.section);
  const firstName = first.section && sectionName(anchors, first.section);
  const sameParts = last.book === first.book && !!lastName?.parts && lastName.parts === firstName?.parts;
  const to = [last.book !== first.book ? last.book?.label : undefined, sameParts ? last.section?.label : lastName?.name].filter(Boolean).join(' · ');
  return to && from ? `${from} – ${to}` : from || to;
}

/**
 * Where a cited sentence is, in words: the chapter and page of the sentence itself (`sentenceStart`), which is what a
 * reader of the paper book looks up; the section's place only where the sentence is not known (its book is not
 * here). The app, its exports and the command line all name a source's place with this one function.
 */
export function sourcePlace(anchors: readonly Anchor[], sentenceStart: number | undefined, section: { start: number; end: number }): string {
  return sentenceStart === undefined ? sectionPlace(anchors, section.start, section.end) : describePlace(anchors, sentenceStart);
}

/**
 * Anchors of a text after it was cut to [start, end): offsets move with the
 * cut; the last anchor of each kind before the cut moves to 0, since what
 * follows still belongs to that chapter and page.
 */
export function cutAnchors(anchors: readonly Anchor[], start: number, end: number): Anchor[] {
  const before = new Map<string, Anchor>();
  const inside: Anchor[] = [];
  for (const a of anchors) {
    if (a.at < start) before.set(a.kind === 'page' ? 'page' : 'section', a);
    else if (a.at < end) inside.push({ ...a, at: a.at - start });
  }
  const moved = [...before.values()]
    .filter((a) => !inside.some((b) => b.at === 0 && (b.kind === 'page') === (a.kind === 'page')))
    .map((a) => ({ ...a, at: 0 }));
  return [...moved, ...inside].sort((a, b) => a.at - b.at);
}

// A heading of a part that holds chapters: "Book One", "PART II", "Volume 3", "Second Epilogue" (a lone "Epilogue" is a chapter).
const PART_HEADING = /^(?:(first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|last)\s+)?(volume|book|part|epilogue)\b/i;
// Where a part heading's own title starts: "BOOK ONE: 1805", "Part Two. The Storm", "Book 3 — Return".
const PART_TITLE = /:\s|\.\s|\s[—–-]\s/;

/** How deep a heading sits: by its level, then, between headings of one level, a volume above a book or part above a chapter. */
function depthOf(a: Anchor): number {
  const m = PART_HEADING.exec(a.label);
  const kind = !m || (m[2]!.toLowerCase() === 'epilogue' && !m[1]) ? 2 : m[2]!.toLowerCase() === 'volume' ? 0 : 1;
  return (a.level ?? 2) * 3 + kind;
}

/** A part's name where it qualifies a chapter: its heading without its own title ("BOOK ONE", not "BOOK ONE: 1805"). */
function shortName(label: string): string {
  if (!PART_HEADING.test(label)) return label;
  const cut = PART_TITLE.exec(label);
  return cut ? label.slice(0, cut.index) : label;
}

/** A section's name in a place, and the parts named before it ('' where none is). */
interface SectionName {
  name: string;
  parts: string;
}

const outlines = new WeakMap<readonly Anchor[], Map<Anchor, SectionName>>();

/**
 * The names of a document's chapters and headings where their labels alone
 * are ambiguous: in a book (of a set, each on its own) where headings of one
 * depth repeat ("CHAPTER I" in every book of War and Peace), each of that
 * depth is named with the parts that hold it, and those with theirs where they
 * repeat too. Worked out once per list of anchors.
 */
function outline(anchors: readonly Anchor[]): Map<Anchor, SectionName> {
  let names = outlines.get(anchors);
  if (names) return names;
  names = new Map();
  let scope: Anchor[] = [];
  const flush = () => {
    const parent = new Map<Anchor, Anchor>();
    const stack: Anchor[] = [];
    const seen = new Map<number, Set<string>>();
    const restarts = new Set<number>();
    for (const a of scope) {
      const depth = depthOf(a);
      while (stack.length && depthOf(stack.at(-1)!) >= depth) stack.pop();
      if (stack.length) parent.set(a, stack.at(-1)!);
      stack.push(a);
      const labels = seen.get(depth) ?? new Set<string>();
      const key = a.label.toLowerCase();
      if (labels.has(key)) restarts.add(depth);
      seen.set(depth, labels.add(key));
    }
    const partsOf = (a: Anchor): string => {
      const up = parent.get(a);
      if (!up || !restarts.has(depthOf(a))) return '';
      const above = partsOf(up);
      return above ? `${above}, ${shortName(up.label)}` : shortName(up.label);
    };
    for (const a of scope) {
      const parts = partsOf(a);
      if (parts) names.set(a, { name: `${parts}, ${a.label}`, parts });
    }
    scope = [];
  };
  for (const a of anchors) {
    if (a.kind === 'book') flush();
    else if (a.kind !== 'page') scope.push(a);
  }
  flush();
  outlines.set(anchors, names);
  return names;
}

/** A chapter's or heading's name in a place: its label, after the parts that hold it where its label alone is ambiguous. */
export function sectionName(anchors: readonly Anchor[], section: Anchor): SectionName {
  return outline(anchors).get(section) ?? { name: section.label, parts: '' };
}
