/**
 * A book's prose as a reader sees it: the line breaks a plain-text book was hard-wrapped at (a line break between
 * two lines of text) become spaces, so the text rewraps at its pane's width; blank lines still part paragraphs.
 * Each break becomes one space, so every offset into the text (a citation's, a marked sentence's) holds as it is.
 */
export function joinHardWraps(text: string): string {
  return text.replace(/(\S[^\S\n]*)\n(?=[^\S\n]*\S)/g, '$1 ');
}
