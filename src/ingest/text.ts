import { IngestError } from './errors';

export interface DecodedText {
  text: string;
  encoding: string;
}

/** Signatures of common binary formats, so that the message can name what was dropped. */
const SIGNATURES: { name: string; bytes: number[] }[] = [
  { name: 'a PNG image', bytes: [0x89, 0x50, 0x4e, 0x47] },
  { name: 'a JPEG image', bytes: [0xff, 0xd8, 0xff] },
  { name: 'a GIF image', bytes: [0x47, 0x49, 0x46, 0x38] },
  { name: 'a WebP or other RIFF media file', bytes: [0x52, 0x49, 0x46, 0x46] },
  { name: 'a PDF', bytes: [0x25, 0x50, 0x44, 0x46] },
  { name: 'a ZIP archive (or EPUB/DOCX)', bytes: [0x50, 0x4b, 0x03, 0x04] },
  { name: 'a gzip archive', bytes: [0x1f, 0x8b] },
  { name: 'a program (ELF)', bytes: [0x7f, 0x45, 0x4c, 0x46] },
  { name: 'a Windows program', bytes: [0x4d, 0x5a] },
  { name: 'a WebAssembly module', bytes: [0x00, 0x61, 0x73, 0x6d] },
];

const SUPPORTED = 'memagent-web reads plain text (.txt) and Markdown (.md) files in UTF-8 or UTF-16.';

function startsWith(bytes: Uint8Array, sig: readonly number[]): boolean {
  return sig.length <= bytes.length && sig.every((b, i) => bytes[i] === b);
}

/**
 * Bytes of a .txt or .md file → its text: UTF-8 (with or without BOM) or UTF-16
 * with BOM, line ends normalised to \n and Unicode to NFC (the form the
 * tokenizer reads), otherwise unchanged. Anything else is refused.
 */
export function decodeText(bytes: Uint8Array, name: string): DecodedText {
  if (bytes.length === 0) {
    throw new IngestError(`"${name}" is empty (0 bytes). Choose a file that contains the text of a book.`);
  }
  const kind = SIGNATURES.find((s) => startsWith(bytes, s.bytes));
  if (kind && !(kind.bytes[0] === 0x4d && looksLikeText(bytes))) {
    throw new IngestError(`"${name}" is ${kind.name}, not text. ${SUPPORTED}`);
  }
  let text: string;
  let encoding: string;
  try {
    if (startsWith(bytes, [0xff, 0xfe])) [text, encoding] = [new TextDecoder('utf-16le', { fatal: true }).decode(bytes), 'UTF-16LE'];
    else if (startsWith(bytes, [0xfe, 0xff])) [text, encoding] = [new TextDecoder('utf-16be', { fatal: true }).decode(bytes), 'UTF-16BE'];
    else [text, encoding] = [new TextDecoder('utf-8', { fatal: true }).decode(bytes), 'UTF-8'];
  } catch {
    throw new IngestError(
      `"${name}" is not valid UTF-8 or UTF-16 text: it may be binary, or text in another encoding. ` +
        `Save it as UTF-8 and try again. ${SUPPORTED}`,
    );
  }
  if (controlShare(text) > 0.01) {
    throw new IngestError(`"${name}" contains binary data, not text. ${SUPPORTED}`);
  }
  text = text.replace(/\r\n?/g, '\n').normalize('NFC');
  if (text.trim() === '') {
    throw new IngestError(`"${name}" holds only blank space, no text. Choose a file that contains the text of a book.`);
  }
  return { text, encoding };
}

/** Share of control characters other than tab, line feed, carriage return and form feed. */
function controlShare(text: string): number {
  const sample = text.length > 65536 ? text.slice(0, 65536) : text;
  let n = 0;
  for (let i = 0; i < sample.length; i++) {
    const c = sample.charCodeAt(i);
    if ((c < 32 && c !== 9 && c !== 10 && c !== 13 && c !== 12) || c === 0x7f || c === 0xfffd) n++;
  }
  return n / Math.max(1, sample.length);
}

function looksLikeText(bytes: Uint8Array): boolean {
  return !bytes.subarray(0, 1024).includes(0);
}
