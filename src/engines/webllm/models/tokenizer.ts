import type { Tokenizer } from '../../../core/tokenizer';
import { QwenTokenizer } from '../../qwen-tokenizer';

/** The part of @mlc-ai/web-tokenizers' Tokenizer (the library WebLLM itself uses) that counting needs. */
export interface WasmTokenizer {
  encode(text: string): Int32Array;
  decode(ids: Int32Array): string;
}

// Qwen2's pre-tokenizer pattern as tokenizer.json writes it.
const QWEN_SPLIT = String.raw`(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`;

/** The regex of a tokenizer.json's Split pre-tokenizer, if it has one. */
export function splitPattern(json: unknown): string | undefined {
  const pre = (json as { pre_tokenizer?: { type?: string; pretokenizers?: unknown[]; pattern?: { Regex?: string } } } | null)?.pre_tokenizer;
  const all = pre?.type === 'Sequence' ? (pre.pretokenizers ?? []) : [pre];
  for (const p of all as { type?: string; pattern?: { Regex?: string } }[]) {
    if (p?.type === 'Split' && typeof p.pattern?.Regex === 'string') return p.pattern.Regex;
  }
  return undefined;
}

function checkQwenSplit(json: unknown, name: string): void {
  if (splitPattern(json) !== QWEN_SPLIT) {
    throw new Error(
      `The tokenizer of ${name} is not Qwen2.5's (its pre-tokenizer differs), and the WebLLM engine counts tokens for Qwen2.5-family models only. Choose a Qwen2.5 model or a model converted from one.`,
    );
  }
}

/**
 * The model's own tokenizer behind the Tokenizer the loop uses. The text is
 * cut with Qwen's pre-tokenizer pattern and each piece is encoded by the
 * model's tokenizer: BPE never merges across those cuts, so counts are exact,
 * no single huge string reaches the wasm heap (which never shrinks), and
 * `<|im_start|>` inside a book stays plain text.
 */
export function modelTokenizer(wasm: WasmTokenizer, name: string, json: unknown): Tokenizer {
  checkQwenSplit(json, name);
  const inner = new QwenTokenizer({
    encode: (text) => Array.from(wasm.encode(text)),
    decode: (ids) => wasm.decode(Int32Array.from(ids)),
  });
  return {
    name,
    encode: (text) => inner.encode(text),
    decode: (ids) => inner.decode(ids),
    count: (text) => inner.count(text),
    pieces: (text) => inner.pieces(text),
  };
}

type WasmTokenizerClass = { fromJSON(json: ArrayBuffer): Promise<WasmTokenizer> };

/** @mlc-ai/web-tokenizers is a UMD file: as an ES module it leaves its exports on globalThis. */
async function wasmTokenizerClass(): Promise<WasmTokenizerClass> {
  const mod = (await import('@mlc-ai/web-tokenizers')) as unknown as { Tokenizer?: WasmTokenizerClass; default?: { Tokenizer?: WasmTokenizerClass } };
  const found = mod.Tokenizer ?? mod.default?.Tokenizer ?? (globalThis as { tokenizers?: { Tokenizer?: WasmTokenizerClass } }).tokenizers?.Tokenizer;
  if (!found) throw new Error('The tokenizer library failed to load. Reload the page and try again.');
  return found;
}

/** A model's tokenizer.json → its Tokenizer, through the same library WebLLM uses. */
export async function loadModelTokenizer(bytes: ArrayBuffer, name: string): Promise<Tokenizer> {
  const json: unknown = JSON.parse(new TextDecoder().decode(bytes));
  checkQwenSplit(json, name); // before the wasm library is loaded for nothing
  const cls = await wasmTokenizerClass();
  return modelTokenizer(await cls.fromJSON(bytes), name, json);
}
