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
 * nothing is known. Every place the app names goes through this one function.
 */
export function describePlace(anchors: readonly Anchor[], offset: number): string {
  const { book, section, page } = anchorsAt(anchors, offset);
  const within = [section?.label, page && `p. ${page.label}`].filter(Boolean).join(', ');
  return [book?.label, within].filter(Boolean).join(' · ');
}

/**
 * Where a section (a chunk, characters [start, end)) is, in words: the place it starts in, and where a chapter or
 * book begins inside it, the last it reaches: "Letter 4 – Chapter 1". The revision list, the section pane and an
 * answer's sources all name a section's place with this one function, so they agree.
 */
export function sectionPlace(anchors: readonly Anchor[], start: number, end: number): string {
  const from = describePlace(anchors, start);
  const first = anchorsAt(anchors, start);
  const last = anchorsAt(anchors, Math.max(start, end - 1));
  if (last.book === first.book && last.section === first.section) return from;
  const to = [last.book !== first.book ? last.book?.label : undefined, last.section?.label].filter(Boolean).join(' · ');
  return to && from ? `${from} – ${to}` : from || to;
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
