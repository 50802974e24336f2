import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Tokenizer } from '../src/core/tokenizer';

/** The shared corpus sits beside the repository: ../shared/corpus from its root. */
const CORPUS = new URL('../../shared/corpus/', import.meta.url);

export function corpusBytes(name: string): Uint8Array<ArrayBuffer> {
  const buf = readFileSync(fileURLToPath(new URL(name, CORPUS)));
  // Copy into a plain ArrayBuffer-backed array, the type ingestBytes takes.
  const out = new Uint8Array(new ArrayBuffer(buf.byteLength));
  out.set(buf);
  return out;
}

/** A corpus book as src/ingest/text.ts reads it: UTF-8, BOM dropped, CRLF → \n, NFC. */
export function corpusText(name: string): string {
  return new TextDecoder().decode(corpusBytes(name)).replace(/\r\n?/g, '\n').normalize('NFC');
}

/** Deterministic bytes (xorshift32), so that "random" inputs are the same on every run. */
export function pseudoRandomBytes(length: number, seed: number): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(new ArrayBuffer(length));
  let x = seed >>> 0 || 1;
  for (let i = 0; i < length; i++) {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    out[i] = x & 0xff;
  }
  return out;
}

/** Waits until `check` holds, checking every 10 ms, for at most `tries` checks. */
export async function until(check: () => boolean | Promise<boolean>, tries = 3000): Promise<void> {
  for (let i = 0; i < tries && !(await check()); i++) await new Promise((r) => setTimeout(r, 10));
}

/** Whitespace-separated words as tokens: enough to count, no vocabulary to load. */
export const words: Tokenizer = {
  name: 'words',
  encode: (t) =>
    t
      .split(/\s+/)
      .filter(Boolean)
      .map(() => 0),
  decode: () => '',
  count: (t) => t.split(/\s+/).filter(Boolean).length,
  *pieces(t) {
    for (const m of t.matchAll(/\S+\s*|\s+/g)) yield { start: m.index, end: m.index + m[0].length, tokens: /\S/.test(m[0]) ? 1 : 0 };
  },
};
