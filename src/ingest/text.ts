import { type DecodedText, decodeBytes, lineEndsInPlace } from './charset';
import { IngestError } from './errors';

export type { DecodedText };

/**
 * A character NFC may change: anything but what it leaves as it is wherever it
 * stands, which is everything below the combining marks (U+0300) and the
 * punctuation of English books (dashes, curly quotes, ellipsis; U+2010–U+205E
 * has no canonical decompositions). Searched for rather than matching the whole
 * text against the stable set, which takes several times longer on a long book.
 */
const NFC_UNSTABLE = /[^\u0000-\u02FF\u2010-\u205E]/;

/** Line ends → \n and Unicode → NFC (the form the tokenizer reads); nothing else changes. */
export function normalizeText(text: string): string {
  // Both steps copy the text: skip them when there is nothing to do, which matters at 100 MB
  // (normalizing 15 MB of English takes about 0.1 s; checking it, a tenth of that).
  if (text.includes('\r')) text = text.replace(/\r\n?/g, '\n');
  return NFC_UNSTABLE.test(text) ? text.normalize('NFC') : text;
}

/**
 * Bytes of a .txt or .md file → its text in the detected encoding, normalised.
 * Binary data, empty files and files of only blank space are refused. With
 * `inPlace`, line ends are normalised in the bytes (which the caller gives up)
 * before they are decoded.
 */
export function decodeText(bytes: Uint8Array, name: string, options: { inPlace?: boolean } = {}): DecodedText {
  const decoded = decodeBytes(options.inPlace ? lineEndsInPlace(bytes) : bytes, name);
  const text = normalizeText(decoded.text);
  if (!/\S/.test(text)) {
    throw new IngestError(`"${name}" holds only blank space, no text. Choose a file that contains the text of a book.`);
  }
  return { text, encoding: decoded.encoding };
}
