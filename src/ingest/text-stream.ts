import { toNfc } from '../core/nfc';

/**
 * A file that cannot be read as a stream after all (a later part of it is not
 * UTF-8): it is read whole instead, as a file of another encoding.
 */
export class NotStreamable extends Error {
  override name = 'NotStreamable';
}

/**
 * Decodes a UTF-8 text file slice by slice into exactly the text that reading
 * it whole makes (see decodeText): line ends become \n and the text NFC. Each
 * call returns the text of the complete lines so far; the rest of the line is
 * kept for the next slice, since a line end, which composes with nothing, is
 * the one place where both steps may cut a text without changing it.
 */
export class Utf8TextStream {
  private readonly decoder = new TextDecoder('utf-8', { fatal: true });
  private carry = '';

  /** The text of `bytes` (the next slice of the file), complete lines only unless `last`. */
  push(bytes: Uint8Array, last = false): string {
    let text: string;
    try {
      text = this.carry + this.decoder.decode(bytes, { stream: !last });
    } catch {
      throw new NotStreamable('the file is not UTF-8 throughout');
    }
    if (!last) {
      // After the last \n, or after a \r that has a character after it other than \n (a lone CR line end).
      const cut = Math.max(text.lastIndexOf('\n'), text.length < 2 ? -1 : text.lastIndexOf('\r', text.length - 2)) + 1;
      this.carry = text.slice(cut);
      text = text.slice(0, cut);
    } else this.carry = '';
    return toNfc(text.includes('\r') ? text.replace(/\r\n?/g, '\n') : text);
  }
}
