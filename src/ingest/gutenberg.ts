/**
 * Project Gutenberg's header (title page, licence notice) and footer (the full
 * licence, ~18 KB) are not part of the book: read as chunks, they cost model
 * time and fill the memory with licence terms.
 */
export interface GutenbergCut {
  /** The book is text[start, end). */
  start: number;
  end: number;
  header: string;
  footer: string;
}

const START = [/^[ \t]*\*{3}[ \t]*START OF (?:THE|THIS) PROJECT GUTENBERG E-?BOOK[^\n]*$/im, /^\*END\*THE SMALL PRINT![^\n]*$/m];
const END = [/^[ \t]*\*{3}[ \t]*END OF (?:THE|THIS) PROJECT GUTENBERG E-?BOOK[^\n]*$/im, /^[ \t]*End of (?:the )?Project Gutenberg(?:'s|’s)? [^\n]*$/im];
// "End of the Project Gutenberg EBook of …" usually stands a few lines above the END marker.
const END_NOTE = /^[ \t]*End of (?:the )?Project Gutenberg(?:'s|’s)?[^\n]*$/gim;

function firstMatch(text: string, patterns: readonly RegExp[], from = 0): RegExpExecArray | null {
  const hay = from ? text.slice(from) : text;
  for (const p of patterns) {
    const m = p.exec(hay);
    if (m) {
      m.index += from;
      return m;
    }
  }
  return null;
}

/** Where Project Gutenberg's START marker is searched for, and its END marker: this many characters from either end. */
export const GUTENBERG_REACH = 200_000;

/** Where the book starts and ends inside a Project Gutenberg text, or null if it has no markers. */
export function findGutenberg(text: string): GutenbergCut | null {
  const head = gutenbergHead(text);
  const start = head ?? 0;
  const foot = gutenbergFoot(text, Math.max(start, text.length - GUTENBERG_REACH), start);
  if (head === null && foot === null) return null;
  return trimCut(text, start, foot ?? text.length);
}

/** Where the text after the START marker begins (before blank space is trimmed), or null without one. */
export function gutenbergHead(text: string): number | null {
  const head = firstMatch(text.length > GUTENBERG_REACH ? text.slice(0, GUTENBERG_REACH) : text, START);
  return head ? head.index + head[0].length : null;
}

/**
 * Where the book ends before the END marker found at or after `from` (moved up
 * to an "End of the Project Gutenberg EBook" line just above it, not before
 * `start`), before blank space is trimmed; null without one.
 */
export function gutenbergFoot(text: string, from: number, start: number): number | null {
  const foot = firstMatch(text, END, Math.max(0, from));
  if (!foot) return null;
  let end = foot.index;
  const window = Math.max(0, start, end - 2000);
  for (const m of text.slice(window, end).matchAll(END_NOTE)) {
    end = window + m.index;
    break;
  }
  return end;
}

/** The cut [start, end) with blank space trimmed from both of its ends. */
function trimCut(text: string, start: number, end: number): GutenbergCut {
  while (start < end && /\s/.test(text[start]!)) start++;
  while (end > start && /\s/.test(text[end - 1]!)) end--;
  return { start, end, header: text.slice(0, start), footer: text.slice(end) };
}
