/**
 * Where a place in a document is: chapters, headings and pages, each an offset
 * into the document's text. Ingest writes them; the inspector reads them.
 */
export type AnchorKind = 'chapter' | 'heading' | 'page';

export interface Anchor {
  /** Offset into the document's text where this chapter, heading or page starts. */
  at: number;
  kind: AnchorKind;
  /** "Chapter 12" for a chapter or heading; the page number ("143") for a page. */
  label: string;
  /** 1 for the outermost headings; pages have none. */
  level?: number;
}

/** The chapter (or heading) and page that hold `offset`, or null when nothing is known. */
export function anchorsAt(anchors: readonly Anchor[], offset: number): { section?: Anchor; page?: Anchor } {
  let section: Anchor | undefined;
  let page: Anchor | undefined;
  // Anchors are sorted by offset: the last of each kind at or before `offset` holds it.
  let lo = 0;
  let hi = anchors.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (anchors[mid]!.at <= offset) lo = mid + 1;
    else hi = mid;
  }
  for (let i = lo - 1; i >= 0 && (!section || !page); i--) {
    const a = anchors[i]!;
    if (a.kind === 'page') page ??= a;
    else section ??= a;
  }
  return { section, page };
}

/** "Chapter 12, p. 143", "Chapter 12", "p. 143", or "" where the document has no structure. */
export function describePlace(anchors: readonly Anchor[], offset: number): string {
  const { section, page } = anchorsAt(anchors, offset);
  return [section?.label, page && `p. ${page.label}`].filter(Boolean).join(', ');
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
