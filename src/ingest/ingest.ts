import { IngestError } from './errors';
import { decodeText } from './text';

export { IngestError };

export interface IngestedText {
  name: string;
  /** SHA-256 of the bytes, hex: the document's identity. */
  hash: string;
  bytes: number;
  encoding: string;
  text: string;
}

const TEXT_EXTENSIONS = new Set(['txt', 'text', 'md', 'markdown']);

/** A file's bytes → its text, or an IngestError that says why not and what to do. */
export async function ingestBytes(name: string, bytes: Uint8Array<ArrayBuffer>): Promise<IngestedText> {
  const ext = name.includes('.') ? name.split('.').pop()!.toLowerCase() : '';
  const { text, encoding } = decodeText(bytes, name);
  if (ext && !TEXT_EXTENSIONS.has(ext) && bytes.length > 0 && /^(pdf|epub|docx?|html?|rtf|odt)$/.test(ext)) {
    throw new IngestError(`"${name}" is a .${ext} file, which this version cannot read yet. Save it as plain text (.txt) and try again.`);
  }
  const digest = await crypto.subtle.digest('SHA-256', bytes);
  const hash = [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, '0')).join('');
  return { name, hash, bytes: bytes.length, encoding, text };
}
