import { Wllama } from '@wllama/wllama';
import compatWasmUrl from '@wllama/wllama-compat/wasm/wllama.wasm?url';
import compatWorkerUrl from '@wllama/wllama-compat/wasm/wllama.js?url';
import wasmUrl from '@wllama/wllama/esm/wasm/wllama.wasm?url';
import type { SpeedMeasurement } from '../../core/estimate';
import { abortError, type ChatMessage, type FinishReason, type GenerateOptions, type GenerateResult, isAbortError } from '../../core/generation';
import { DEFAULT_READ_SETTINGS } from '../../core/plan';
import type { Tokenizer } from '../../core/tokenizer';
import type { Engine, EngineConfig } from '../engine';
import { ContextWindowExceededError, ModelLoadError, ModelRuntimeError } from '../errors';
import { ModelDownloadError } from '../webllm/model-fetch';
import { llamaCppParams, stepRequest } from '../request';
import { loadQwenTokenizer } from '../qwen-tokenizer';
import { effectiveThreads, isQwenVocabulary, type ModelSource, parseWllamaConfig, WLLAMA_ENGINE_ID, type WllamaSettings } from './models';
import { downloadCache } from './files';
import { openLocalModel } from './picked-models';
import { sharedMemory } from '../shared-memory';

/** The slice of Wllama used here; unit tests put a stub in its place. */
export interface WllamaRuntime {
  loadModelFromUrl(url: string, params: LoadParams & { progressCallback?(p: { loaded: number; total: number }): void }): Promise<void>;
  loadModel(files: Blob[], params: LoadParams): Promise<void>;
  getLoadedContextInfo(): { n_ctx: number; n_ctx_train: number; n_vocab: number; metadata: Record<string, string> };
  getNumThreads(): number;
  createChatCompletion(options: CompletionParams & { stream: true; onData(chunk: CompletionChunk): void }): Promise<void>;
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

const browserDeps = (): WllamaDeps => ({
  newRuntime: browserRuntime,
  tokenizer: loadQwenTokenizer,
  openLocal: openLocalModel,
  isolated: sharedMemory(),
  hardwareConcurrency: globalThis.navigator?.hardwareConcurrency ?? 1,
});

/** Tokens of slack besides the chat template: pieces that merge differently where texts meet, and 1%. */
export function slackTokens(contextTokens: number): number {
  return 16 + Math.ceil(contextTokens / 100);
}

/**
 * How many model tokens one app token may become, planned before anything is
 * measured. Qwen GGUFs share the app's vocabulary (1). Any other vocabulary is
 * counted with Qwen's tokenizer and given room for 1.5× as many: English prose
 * measured 1.1× in Llama 2's vocabulary; each step's reported prompt size is
 * checked, so a text that needs more fails clearly instead of overflowing.
 */
export const FOREIGN_VOCABULARY_FACTOR = 1.5;

interface Loaded {
  engine: WllamaEngine;
  runtime: WllamaRuntime;
  nCtx: number;
}

export interface LoadProgress {
  stage: 'download' | 'load';
  loaded: number;
  total: number;
}

/**
 * The one model in memory and the queue every request waits in. A CPU has one
 * model's worth of memory and cores to give, so requests from all runs and
 * engines take turns, and loading another model unloads the last one.
 */
export class WllamaHost {
  private loaded: Loaded | null = null;
  private tail: Promise<unknown> = Promise.resolve();
  readonly listeners = new Set<(p: LoadProgress) => void>();

  exclusive<T>(work: () => Promise<T>): Promise<T> {
    const run = this.tail.then(work, work);
    // The caller sees the failure through `run`; the tail only orders the next work after it.
    this.tail = run.catch(() => undefined);
    return run;
  }

  current(engine: WllamaEngine): Loaded | null {
    return this.loaded?.engine === engine ? this.loaded : null;
  }

  async unload(): Promise<void> {
    const was = this.loaded;
    this.loaded = null;
    // Best effort: a runtime that cannot exit cleanly is dropped all the same.
    await was?.runtime.exit().catch(() => undefined);
  }

  /** Call only inside `exclusive`. */
  async load(engine: WllamaEngine, source: ModelSource, params: LoadParams, deps: WllamaDeps): Promise<Loaded> {
    await this.unload();
    const runtime = await deps.newRuntime();
    const report = (p: LoadProgress) => this.listeners.forEach((l) => l(p));
    try {
      if (source.kind === 'url') {
        await runtime.loadModelFromUrl(source.url, {
          ...params,
          progressCallback: ({ loaded, total }) => report({ stage: 'download', loaded, total }),
        });
      } else {
        await runtime.loadModel(await deps.openLocal(source.key), params);
      }
    } catch (e) {
      // Best effort: the load's own failure is what is thrown.
      await runtime.exit().catch(() => undefined);
      throw explainLoadError(e, source);
    }
    report({ stage: 'load', loaded: 1, total: 1 });
    this.loaded = { engine, runtime, nCtx: runtime.getLoadedContextInfo().n_ctx };
    return this.loaded;
  }
}

function explainLoadError(e: unknown, source: ModelSource): Error {
  const detail = e instanceof Error ? e.message : String(e);
  if (source.kind === 'local') return new ModelLoadError(`llama.cpp could not load "${source.name}": ${detail}`, { cause: e });
  if (/fetch|network|HTTP|CORS/i.test(detail) || e instanceof TypeError) {
    return new ModelDownloadError(
      `The model could not be downloaded from ${source.url} (${detail}). Check the address and that you are online; ` +
        'the server must allow cross-origin requests (CORS). Once downloaded, a model loads from this browser without a network.',
      'network',
    );
  }
  return new ModelLoadError(`llama.cpp could not load the model from ${source.url}: ${detail}`, { cause: e });
}

const defaultHost = new WllamaHost();

// Enough plain prose for a prompt of a few hundred tokens in any vocabulary.
const SAMPLE =
  'The river ran wide and slow past the mill, and the miller counted the sacks of grain twice each morning. ' +
  'Nobody in the village remembered a year without a flood, yet every spring they planted the lower fields again. ';

/**
 * llama.cpp in WebAssembly, on the CPU. Prompts go through the GGUF's own chat
 * template; the app's tokenizer (Qwen's) counts chunks, and every prompt is
 * checked against the model's own count so that none overflows the context.
 */
export class WllamaEngine implements Engine {
  readonly id = WLLAMA_ENGINE_ID;
  /** The largest context this engine will allocate: the configured one, capped by the model's trained context. */
  private maxContext = 0;
  /** Tokens the chat template adds around an empty user message, as the model counts them. */
  overhead = 0;
  /** Model tokens per app token: 1 for a Qwen GGUF, otherwise planned generously until measured. */
  private factor = 1;
  private measuredFactor = 0;
  qwenVocabulary = false;
  /** The context the runs prepared so far need (model tokens); the loaded context never shrinks below it. */
  private needed = 0;
  threads = 1;

  private constructor(
    readonly tokenizer: Tokenizer,
    readonly settings: WllamaSettings,
    private readonly deps: WllamaDeps,
    private readonly host: WllamaHost,
  ) {}

  /** Loads the model once to learn its trained context, vocabulary and chat-template size. */
  static async create(config: EngineConfig | undefined, deps: WllamaDeps = browserDeps(), host: WllamaHost = defaultHost): Promise<WllamaEngine> {
    const settings = parseWllamaConfig(config);
    const engine = new WllamaEngine(await deps.tokenizer(), settings, deps, host);
    engine.threads = effectiveThreads(settings.threads, deps.hardwareConcurrency, deps.isolated);
    await host.exclusive(() => engine.inspect());
    return engine;
  }

  private params(nCtx: number): LoadParams {
    // No GPU layers: this is the CPU engine. No context shift: a step that does not fit must fail, never lose its start.
    return { n_ctx: nCtx, n_threads: this.threads, n_gpu_layers: 0, n_parallel: 1, ctx_shift: false, jinja: true };
  }

  private async inspect(): Promise<void> {
    const loaded = await this.host.load(this, this.settings.source, this.params(this.settings.contextTokens), this.deps);
    const info = loaded.runtime.getLoadedContextInfo();
    this.maxContext = Math.min(this.settings.contextTokens, info.n_ctx_train || this.settings.contextTokens);
    this.qwenVocabulary = isQwenVocabulary(info);
    this.factor = this.qwenVocabulary ? 1 : FOREIGN_VOCABULARY_FACTOR;
    this.threads = loaded.runtime.getNumThreads();
    let prompt = 0;
    await loaded.runtime.createChatCompletion({
      messages: [{ role: 'user', content: '' }],
      max_tokens: 1,
      cache_prompt: false,
      stream: true,
      onData: (c) => {
        if (c.timings) prompt = c.timings.prompt_n + c.timings.cache_n;
      },
    });
    this.overhead = prompt;
  }

  /** Tokens (app tokens) the budget planner may fill: prompt and reply together. */
  get contextWindow(): number {
    return Math.max(0, Math.floor((this.maxContext - this.overhead - slackTokens(this.maxContext)) / this.factor));
  }

  /** Model tokens a request of `tokens` app tokens may take, with the chat template and slack. */
  private modelTokens(tokens: number, factor = this.factor): number {
    return this.overhead + Math.ceil(tokens * factor) + slackTokens(tokens);
  }

  /**
   * Allocates the context the run planned (rounded up to 256), no more: a
   * smaller context leaves memory to the rest of the computer. A loaded context
   * more than twice what any run needs is reloaded smaller.
   */
  async prepare(contextTokens: number, signal?: AbortSignal): Promise<void> {
    const want = Math.min(this.maxContext, roundUp(this.modelTokens(contextTokens), 256));
    this.needed = Math.max(this.needed, want);
    await this.host.exclusive(async () => {
      if (signal?.aborted) throw abortError();
      const loaded = this.host.current(this);
      if (!loaded || loaded.nCtx < this.needed || loaded.nCtx > 2 * this.needed) {
        await this.host.load(this, this.settings.source, this.params(this.needed), this.deps);
      }
    });
  }

  private async ensureLoaded(minCtx: number): Promise<{ runtime: WllamaRuntime; nCtx: number }> {
    const loaded = this.host.current(this);
    if (loaded && loaded.nCtx >= minCtx) return loaded;
    const nCtx = Math.min(this.maxContext, Math.max(this.needed, roundUp(minCtx, 256)));
    return this.host.load(this, this.settings.source, this.params(nCtx), this.deps);
  }

  async generate(messages: readonly ChatMessage[], options: GenerateOptions): Promise<GenerateResult> {
    if (options.signal?.aborted) throw abortError();
    return this.host.exclusive(() => this.generateNow(messages, options));
  }

  private async generateNow(messages: readonly ChatMessage[], options: GenerateOptions): Promise<GenerateResult> {
    const { signal, maxTokens } = options;
    if (signal?.aborted) throw abortError();
    const counted = messages.reduce((n, m) => n + this.tokenizer.count(m.content), 0);
    // Measured ratios (with a tenth to spare) replace the plan's once a prompt has been counted by the model.
    const factor = this.qwenVocabulary ? 1 : this.measuredFactor ? Math.max(1, this.measuredFactor * 1.1) : this.factor;
    const expected = this.overhead + Math.ceil(counted * factor) + maxTokens;
    if (expected > this.maxContext) {
      throw new ContextWindowExceededError(
        `This step needs about ${expected} tokens of the model's (prompt, reply and chat template), more than the ` +
          `${this.maxContext}-token context it can hold. Choose a smaller chunk size or memory size and start the run again.`,
      );
    }
    const { runtime, nCtx } = await this.ensureLoaded(expected);

    let text = '';
    let finish: string | null = null;
    let timings: CompletionChunk['timings'];
    try {
      await runtime.createChatCompletion({
        // No system message: the GGUF's own chat template adds the model's default, as a server's would.
        ...llamaCppParams(stepRequest(messages, options)),
        cache_prompt: true,
        abortSignal: signal,
        stream: true,
        onData: (chunk) => {
          const choice = chunk.choices[0];
          const delta = choice?.delta?.content;
          if (delta) {
            text += delta;
            options.onToken?.(delta);
          }
          if (choice?.finish_reason) finish = choice.finish_reason;
          if (chunk.timings) timings = chunk.timings;
        },
      });
    } catch (e) {
      if (isAbortError(e) || signal?.aborted) throw abortError();
      const message = e instanceof Error ? e.message : String(e);
      const over = /request \((\d+) tokens\) exceeds the available context size \((\d+) tokens\)/.exec(message);
      if (over) {
        throw new ContextWindowExceededError(
          `This step's prompt is ${over[1]} tokens for this model, more than the ${over[2]}-token context it was loaded with; ` +
            'nothing was cut. Choose a smaller chunk size or memory size and start the run again.',
          { cause: e },
        );
      }
      // A crashed runtime cannot answer again: the next request loads the model afresh.
      if (e instanceof Error && e.name === 'WllamaRuntimeError') await this.host.unload();
      throw new ModelRuntimeError(`llama.cpp stopped with an error: ${message}`, { cause: e });
    }
    if (signal?.aborted) throw abortError();

    const promptTokens = timings ? timings.prompt_n + timings.cache_n : this.overhead + counted;
    const completionTokens = timings?.predicted_n ?? 0;
    if (timings && counted > 0) {
      this.measuredFactor = Math.max(this.measuredFactor, (promptTokens - this.overhead) / counted);
    }
    // Stopped for length short of max_tokens: the context ran out, so the reply is incomplete.
    if (finish === 'length' && timings && completionTokens < maxTokens) {
      throw new ContextWindowExceededError(
        `The model's ${nCtx}-token context filled up after ${completionTokens} of ${maxTokens} reply tokens; the reply was not kept. ` +
          'Choose a smaller chunk size or memory size and start the run again.',
      );
    }
    let finishReason: FinishReason = finish === 'length' ? 'length' : 'stop';
    // The memory cap holds in the app's tokens too (another vocabulary may count more), measured on the
    // trimmed text the loop keeps: a leading space can change how the first word splits.
    if (this.tokenizer.count(text.trim()) > maxTokens) {
      text = cutToTokens(this.tokenizer, text.trim(), maxTokens);
      finishReason = 'length';
    }
    const usage: GenerateResult['usage'] = { promptTokens, completionTokens: completionTokens || this.tokenizer.count(text) };
    if (timings) {
      usage.prefillTokensPerSecond = timings.prompt_per_second;
      usage.decodeTokensPerSecond = timings.predicted_per_second;
      usage.timeToFirstTokenSeconds = timings.prompt_ms / 1000;
    }
    return { text, finishReason, usage };
  }

  /** Reads a few hundred tokens and writes 32, uncached: this device's speed with this model and thread count. */
  async measureSpeed(): Promise<SpeedMeasurement & { threads: number }> {
    return this.host.exclusive(async () => {
      const { runtime } = await this.ensureLoaded(Math.min(1024, this.maxContext));
      let timings: CompletionChunk['timings'];
      await runtime.createChatCompletion({
        // Sampled as every step is (sampling over the whole vocabulary costs time on a CPU), at the default temperature and top p.
        ...llamaCppParams(
          stepRequest([{ role: 'user', content: `${SAMPLE.repeat(6)}\nContinue the story.` }], {
            maxTokens: 32,
            temperature: DEFAULT_READ_SETTINGS.temperature,
            topP: DEFAULT_READ_SETTINGS.topP,
          }),
        ),
        ignore_eos: true,
        cache_prompt: false,
        stream: true,
        onData: (c) => {
          if (c.timings) timings = c.timings;
        },
      });
      if (!timings) throw new Error('llama.cpp reported no timings.');
      return {
        prefillTokensPerSecond: timings.prompt_per_second,
        decodeTokensPerSecond: timings.predicted_per_second,
        promptTokens: timings.prompt_n + timings.cache_n,
        completionTokens: timings.predicted_n,
        source: 'reported',
        threads: this.threads,
      };
    });
  }
}

function roundUp(n: number, step: number): number {
  return Math.ceil(n / step) * step;
}

/** The longest prefix of `text` within `max` tokens, cut between tokens. */
export function cutToTokens(tokenizer: Tokenizer, text: string, max: number): string {
  let used = 0;
  let end = 0;
  for (const piece of tokenizer.pieces(text)) {
    if (used + piece.tokens > max) break;
    used += piece.tokens;
    end = piece.end;
  }
  return text.slice(0, end).trimEnd();
}

// One engine per configuration, shared by runs and speed measurements, so a model loads once.
const engines = new Map<string, Promise<WllamaEngine>>();

export function createWllamaEngine(config?: EngineConfig): Promise<WllamaEngine> {
  const key = JSON.stringify(parseWllamaConfig(config));
  let engine = engines.get(key);
  if (!engine) {
    engine = WllamaEngine.create(config);
    engine.catch(() => engines.delete(key));
    engines.set(key, engine);
  }
  return engine;
}

/** Loads the configured model (reporting download progress) and measures its speed on this device, with the threads it used. */
export async function measureModel(config: EngineConfig, onProgress?: (p: LoadProgress) => void): Promise<SpeedMeasurement & { threads: number }> {
  if (onProgress) defaultHost.listeners.add(onProgress);
  try {
    return await (await createWllamaEngine(config)).measureSpeed();
  } finally {
    if (onProgress) defaultHost.listeners.delete(onProgress);
  }
}
