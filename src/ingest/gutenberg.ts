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

/** Where the book starts and ends inside a Project Gutenberg text, or null if it has no markers. */
export function findGutenberg(text: string): GutenbergCut | null {
  const head = firstMatch(text.length > 200_000 ? text.slice(0, 200_000) : text, START);
  let start = head ? head.index + head[0].length : 0;
  const tail = text.length > 200_000 ? text.length - 200_000 : 0;
  const foot = firstMatch(text, END, Math.max(start, tail));
  let end = foot ? foot.index : text.length;
  if (foot) {
    // Move the cut up to an "End of the Project Gutenberg EBook" line just above the marker.
    const window = Math.max(start, end - 2000);
    for (const m of text.slice(window, end).matchAll(END_NOTE)) {
      end = window + m.index;
      break;
    }
  }
  if (!head && !foot) return null;
  while (start < end && /\s/.test(text[start]!)) start++;
  while (end > start && /\s/.test(text[end - 1]!)) end--;
  return { start, end, header: text.slice(0, start), footer: text.slice(end) };
}
