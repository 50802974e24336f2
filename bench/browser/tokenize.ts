/** Runs in Chromium: our piece-cached BPE against WebLLM's WASM tokenizer, on the same text. */
import { Tokenizer as WasmTokenizer } from '@mlc-ai/web-tokenizers';
import { chunkText } from '../../src/core/chunker';
import { loadQwenTokenizer } from '../../src/engines/qwen-tokenizer';

export interface BrowserTokenizerResult {
  chars: number;
  tokens: number;
  jsLoadMs: number;
  jsFirstChunkMs: number;
  jsChunkAllMs: number;
  chunks: number;
  wasmLoadMs: number;
  wasmEncodeMs: number;
  wasmTokens: number;
}

/** Cuts text into ~4 KB pieces at spaces: one 13 MB string grows the WASM heap to ~1 GB. */
function* slices(text: string, size = 4096): Generator<string> {
  let at = 0;
  while (at < text.length) {
    let end = Math.min(text.length, at + size);
    if (end < text.length) {
      const space = text.lastIndexOf(' ', end);
      if (space > at) end = space;
    }
    yield text.slice(at, end);
    at = end;
  }
}

export async function run(textUrl: string, tokenizerUrl: string): Promise<BrowserTokenizerResult> {
  const text = await (await fetch(textUrl)).text();

  let t = performance.now();
  const js = await loadQwenTokenizer();
  const jsLoadMs = performance.now() - t;
  t = performance.now();
  const chunks = chunkText(text, js, 5000);
  const first = chunks.next();
  const jsFirstChunkMs = performance.now() - t;
  let n = 1;
  let tokens = first.done ? 0 : first.value.tokens;
  for (const c of chunks) {
    n++;
    tokens += c.tokens;
  }
  const jsChunkAllMs = performance.now() - t;

  const json = await (await fetch(tokenizerUrl)).arrayBuffer();
  t = performance.now();
  const wasm = await WasmTokenizer.fromJSON(json);
  const wasmLoadMs = performance.now() - t;
  t = performance.now();
  let wasmTokens = 0;
  for (const s of slices(text)) wasmTokens += wasm.encode(s).length;
  const wasmEncodeMs = performance.now() - t;
  wasm.dispose();

  return { chars: text.length, tokens, jsLoadMs, jsFirstChunkMs, jsChunkAllMs, chunks: n, wasmLoadMs, wasmEncodeMs, wasmTokens };
}
