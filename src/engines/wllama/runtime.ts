/**
 * Wllama, the llama.cpp WebAssembly runtime, as the engine uses it: the slice
 * of its API (tests put a stub in its place), which build this browser runs,
 * and where its wasm files are kept so that it starts offline.
 */
import { Wllama } from '@wllama/wllama';
import compatWasmUrl from '@wllama/wllama-compat/wasm/wllama.wasm?url';
import compatWorkerUrl from '@wllama/wllama-compat/wasm/wllama.js?url';
import wasmUrl from '@wllama/wllama/esm/wasm/wllama.wasm?url';
import type { Tokenizer } from '../../core/tokenizer';
import { loadQwenTokenizer } from '../qwen-tokenizer';
import { sharedMemory } from '../shared-memory';
import { downloadCache } from './files';
import { openLocalModel } from './picked-models';

/** The slice of Wllama used here; unit tests put a stub in its place. */
export interface WllamaRuntime {
  loadModelFromUrl(url: string, params: LoadParams & { progressCallback?(p: { loaded: number; total: number }): void }): Promise<void>;
  loadModel(files: Blob[], params: LoadParams): Promise<void>;
  getLoadedContextInfo(): { n_ctx: number; n_ctx_train: number; n_vocab: number; metadata: Record<string, string> };
  getNumThreads(): number;
  createChatCompletion(options: CompletionParams & { stream: true; onData(chunk: CompletionChunk): void }): Promise<void>;
  /** A prompt continued as it is (llama.cpp parses the chat template's special tokens in it). */
  createCompletion(options: RawParams & { stream: false }): Promise<RawReply>;
  exit(): Promise<void>;
}

export interface LoadParams {
  n_ctx: number;
  n_threads: number;
  n_gpu_layers: number;
  n_parallel: number;
  ctx_shift: boolean;
  jinja: boolean;
}

export interface CompletionParams {
  messages: { role: 'system' | 'user' | 'assistant'; content: string }[];
  max_tokens: number;
  temperature?: number;
  top_p?: number;
  seed?: number;
  /** llama.cpp's sampling: set to neutral values on every step (see request.ts). */
  top_k?: number;
  min_p?: number;
  repeat_penalty?: number;
  presence_penalty?: number;
  frequency_penalty?: number;
  xtc_probability?: number;
  mirostat?: number;
  ignore_eos?: boolean;
  cache_prompt?: boolean;
  abortSignal?: AbortSignal;
}

/** A raw completion's parameters: the chat parameters with a prompt in place of messages. */
export type RawParams = Omit<CompletionParams, 'messages'> & { prompt: string };

export interface RawReply {
  choices: { text: string; finish_reason: string | null }[];
  usage?: { prompt_tokens: number; completion_tokens: number };
}

export interface CompletionChunk {
  choices: { delta?: { content?: string | null }; finish_reason?: string | null }[];
  timings?: { cache_n: number; prompt_n: number; prompt_ms: number; prompt_per_second: number; predicted_n: number; predicted_per_second: number };
}

/** What the engine takes from its surroundings; tests replace each. */
export interface WllamaDeps {
  newRuntime(): Promise<WllamaRuntime>;
  tokenizer(): Promise<Tokenizer>;
  openLocal(key: string): Promise<Blob[]>;
  /** Whether the page is cross-origin isolated, which threads need. */
  isolated: boolean;
  hardwareConcurrency: number;
}

/** Cache Storage for the wasm build this browser runs, so that llama.cpp starts offline once it has run. */
export const RUNTIME_CACHE = 'memagent-wllama-runtime';

/**
 * Browsers without JSPI or memory64 (Safari) need the compat build; Firefox
 * keeps the default one (as Wllama decides in its 'safari' compat mode).
 */
export function needsCompatBuild(): boolean {
  if (/firefox/i.test(globalThis.navigator?.userAgent ?? '')) return false;
  if (!('Suspending' in WebAssembly)) return true;
  try {
    new WebAssembly.Memory({ address: 'i64', initial: 1n } as unknown as WebAssembly.MemoryDescriptor);
    return false;
  } catch {
    return true;
  }
}

/**
 * The asset from Cache Storage (fetched and stored on first use, older
 * releases dropped) as a blob: URL; the plain URL where there is no cache.
 */
export async function cachedAsset(url: string, caches: CacheStorage | undefined = globalThis.caches): Promise<string> {
  if (!caches) return url;
  try {
    const cache = await caches.open(RUNTIME_CACHE);
    let response = await cache.match(url);
    if (!response) {
      const fetched = await fetch(url);
      if (!fetched.ok) return url;
      await cache.put(url, fetched.clone());
      for (const old of await cache.keys()) if (old.url !== url) await cache.delete(old);
      response = fetched;
    }
    return URL.createObjectURL(await response.blob());
  } catch {
    return url;
  }
}

let assets: Promise<{ wasm: string; compatWasm: string }> | undefined;

async function browserRuntime(): Promise<WllamaRuntime> {
  const absolute = (u: string) => new URL(u, self.location.href).href;
  const compat = needsCompatBuild();
  assets ??= Promise.all([
    compat ? absolute(wasmUrl) : cachedAsset(absolute(wasmUrl)),
    compat ? cachedAsset(absolute(compatWasmUrl)) : absolute(compatWasmUrl),
  ]).then(([wasm, compatWasm]) => ({ wasm, compatWasm }));
  const { wasm, compatWasm } = await assets;
  // Where the browser has no private file system (WebKitGTK by default), downloads are kept in Cache Storage.
  const w = new Wllama({ default: wasm }, { suppressNativeLog: true, cacheManager: await downloadCache() });
  // The compat build is served by this app, never fetched from a CDN.
  w.setCompat({ worker: absolute(compatWorkerUrl), wasm: compatWasm });
  return w;
}

/** The engine's surroundings in a browser worker. */
export const browserDeps = (): WllamaDeps => ({
  newRuntime: browserRuntime,
  tokenizer: loadQwenTokenizer,
  openLocal: openLocalModel,
  isolated: sharedMemory(),
  hardwareConcurrency: globalThis.navigator?.hardwareConcurrency ?? 1,
});
