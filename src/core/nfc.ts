/**
 * A character NFC may change: anything but what it leaves as it is wherever it
 * stands, which is everything below the combining marks (U+0300) and the
 * punctuation of English books (dashes, curly quotes, ellipsis; U+2010–U+205E
 * has no canonical decompositions). Written as the two ranges outside those
 * (UTF-16 code units, surrogates included). Searched for rather than matching a
 * whole text against the stable set, which takes several times longer on a long book.
 */
const NFC_UNSTABLE = /[\u0300-\u200F\u205F-\uFFFF]/;

/** `text` in NFC: itself, without a copy, when none of its characters can change. */
export function toNfc(text: string): string {
  return NFC_UNSTABLE.test(text) ? text.normalize('NFC') : text;
}

/** Whether `text` is in NFC: at once for text of such characters only (most English books), else by normalizing it. */
export function isNfc(text: string): boolean {
  return !NFC_UNSTABLE.test(text) || text.normalize('NFC') === text;
}
