import chardet from 'chardet';
import { IngestError } from './errors';

export interface DecodedText {
  text: string;
  /** The encoding the bytes were read as, e.g. "UTF-8", "GB18030", "windows-1252". */
  encoding: string;
}

/** Signatures of common binary formats, so that the message can name what was dropped. */
const SIGNATURES: { name: string; bytes: number[] }[] = [
  { name: 'a PNG image', bytes: [0x89, 0x50, 0x4e, 0x47] },
  { name: 'a JPEG image', bytes: [0xff, 0xd8, 0xff] },
  { name: 'a GIF image', bytes: [0x47, 0x49, 0x46, 0x38] },
  { name: 'a WebP or other RIFF media file', bytes: [0x52, 0x49, 0x46, 0x46] },
  { name: 'a PDF', bytes: [0x25, 0x50, 0x44, 0x46] },
  { name: 'a ZIP archive', bytes: [0x50, 0x4b, 0x03, 0x04] },
  { name: 'a gzip archive', bytes: [0x1f, 0x8b] },
  { name: 'a 7-Zip archive', bytes: [0x37, 0x7a, 0xbc, 0xaf] },
  { name: 'a RAR archive', bytes: [0x52, 0x61, 0x72, 0x21] },
  { name: 'a program (ELF)', bytes: [0x7f, 0x45, 0x4c, 0x46] },
  { name: 'a Windows program', bytes: [0x4d, 0x5a] },
  { name: 'a WebAssembly module', bytes: [0x00, 0x61, 0x73, 0x6d] },
  { name: 'an old Word or Excel file (OLE)', bytes: [0xd0, 0xcf, 0x11, 0xe0] },
];

export const SUPPORTED =
  'memagent-web reads .txt, .md, .html, .epub, .pdf and .docx files; text files may be in UTF-8, UTF-16, ' +
  'Windows-1252/Latin-1, GB18030, Big5 or Shift_JIS.';

export function startsWith(bytes: Uint8Array, sig: readonly number[]): boolean {
  return sig.length <= bytes.length && sig.every((b, i) => bytes[i] === b);
}

/** What kind of binary file `bytes` is, by its first bytes, or null. */
export function binaryKind(bytes: Uint8Array): string | null {
  const kind = SIGNATURES.find((s) => startsWith(bytes, s.bytes));
  // "MZ" also starts ordinary words; a Windows program has NULs early on.
  if (kind && kind.bytes[0] === 0x4d && !bytes.subarray(0, 1024).includes(0)) return null;
  return kind?.name ?? null;
}

// chardet's names → labels that TextDecoder knows (WHATWG reads ISO-8859-1 as windows-1252 anyway).
const DECODER_LABEL: Record<string, string> = {
  'ISO-8859-1': 'windows-1252',
  'UTF-16LE': 'utf-16le',
  'UTF-16BE': 'utf-16be',
};

// Enough text for the detector to be sure, small enough to be quick on a 100 MB file.
const SAMPLE_BYTES = 256 * 1024;

/**
 * Bytes of a text file → its text. A BOM decides; otherwise valid UTF-8 is
 * UTF-8; otherwise a statistical detector (chardet) names the legacy encoding.
 * Binary data and files that decode to nothing are refused.
 */
export function decodeBytes(bytes: Uint8Array, name: string): DecodedText {
  if (bytes.length === 0) {
    throw new IngestError(`"${name}" is empty (0 bytes). Choose a file that contains the text of a book.`);
  }
  const kind = binaryKind(bytes);
  if (kind) throw new IngestError(`"${name}" is ${kind}, not text. ${SUPPORTED}`);

  let decoded: DecodedText | null = null;
  // A BOM is the writer's own word; the default decoders drop it from the text.
  if (startsWith(bytes, [0xef, 0xbb, 0xbf])) decoded = tryDecode(bytes, 'utf-8', 'UTF-8');
  else if (startsWith(bytes, [0xff, 0xfe])) decoded = tryDecode(bytes, 'utf-16le', 'UTF-16LE');
  else if (startsWith(bytes, [0xfe, 0xff])) decoded = tryDecode(bytes, 'utf-16be', 'UTF-16BE');
  else if (!hasNul(bytes)) {
    decoded = tryDecode(bytes, 'utf-8', 'UTF-8');
    if (!decoded) {
      const sample = bytes.subarray(0, SAMPLE_BYTES);
      for (const match of chardet.analyse(sample)) {
        if (match.confidence < 10 || /^UTF-(8|32)/.test(match.name)) continue;
        const label = DECODER_LABEL[match.name] ?? match.name.toLowerCase();
        if (!isKnownLabel(label)) continue;
        decoded = { text: decodeWith(label, bytes), encoding: match.name === 'ISO-8859-1' ? 'windows-1252' : match.name };
        break;
      }
    }
  }
  const bom = startsWith(bytes, [0xef, 0xbb, 0xbf]) ? 'UTF-8' : startsWith(bytes, [0xff, 0xfe]) || startsWith(bytes, [0xfe, 0xff]) ? 'UTF-16' : null;
  if (!decoded && bom) {
    // The file says which encoding it is in, and its bytes break that encoding.
    throw new IngestError(`"${name}" starts with a ${bom} byte order mark but is not valid ${bom} text: it is damaged or not text. ${SUPPORTED}`);
  }
  if (!decoded || controlShare(decoded.text) > 0.01) {
    throw new IngestError(`"${name}" contains binary data, not text. ${SUPPORTED}`);
  }
  return decoded;
}

// Windows-1252's printable characters at 0x80–0x9F (the five unassigned bytes stay C1 controls).
const CP1252_HIGH = '€\u0081‚ƒ„…†‡ˆ‰Š‹Œ\u008dŽ\u008f\u0090‘’“”•–—˜™š›œ\u009džŸ';

/**
 * Decodes with TextDecoder, except that windows-1252 is finished by hand: some
 * runtimes (Node 20) read it as ISO-8859-1, leaving C1 controls for quotes and dashes.
 */
export function decodeWith(label: string, bytes: Uint8Array): string {
  const decoder = new TextDecoder(label);
  const text = decoder.decode(bytes);
  if (decoder.encoding !== 'windows-1252') return text;
  return text.replace(/[\u0080-\u009f]/g, (c) => CP1252_HIGH[c.charCodeAt(0) - 0x80]!);
}

function tryDecode(bytes: Uint8Array, label: string, encoding: string): DecodedText | null {
  try {
    return { text: new TextDecoder(label, { fatal: true }).decode(bytes), encoding };
  } catch {
    return null;
  }
}

function isKnownLabel(label: string): boolean {
  try {
    new TextDecoder(label);
    return true;
  } catch {
    return false;
  }
}

/**
 * Line ends → \n in the bytes themselves (CRLF and lone CR alike), before they
 * are decoded: the text is then made once, where normalising it afterwards
 * would make a second copy of it. Returns the bytes that remain (a view of the
 * same memory). Byte 0x0D is a carriage return in every encoding read here
 * except UTF-16, so files with a UTF-16 BOM, NUL bytes or a binary signature
 * are left as they are.
 */
export function lineEndsInPlace(bytes: Uint8Array): Uint8Array {
  if (startsWith(bytes, [0xff, 0xfe]) || startsWith(bytes, [0xfe, 0xff]) || hasNul(bytes) || binaryKind(bytes)) return bytes;
  let read = bytes.indexOf(0x0d);
  if (read < 0) return bytes;
  let write = read;
  while (read < bytes.length) {
    // bytes[read] is a carriage return: it becomes the line feed, and the line feed after it is dropped.
    bytes[write++] = 0x0a;
    read += bytes[read + 1] === 0x0a ? 2 : 1;
    const next = bytes.indexOf(0x0d, read);
    const end = next < 0 ? bytes.length : next;
    bytes.copyWithin(write, read, end);
    write += end - read;
    read = end;
  }
  return bytes.subarray(0, write);
}

/** Text never holds NUL bytes, except UTF-16 (which carries a BOM here). */
export function hasNul(bytes: Uint8Array): boolean {
  return bytes.subarray(0, SAMPLE_BYTES).includes(0);
}

/** Share of control characters other than tab, line feed, carriage return and form feed. */
export function controlShare(text: string): number {
  const sample = text.length > 65536 ? text.slice(0, 65536) : text;
  let n = 0;
  for (let i = 0; i < sample.length; i++) {
    const c = sample.charCodeAt(i);
    if ((c < 32 && c !== 9 && c !== 10 && c !== 13 && c !== 12) || c === 0x7f || c === 0xfffd) n++;
  }
  return n / Math.max(1, sample.length);
}
