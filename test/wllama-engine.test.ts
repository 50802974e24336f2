import { resolveObjectURL } from 'node:buffer';
import { describe, expect, it, vi } from 'vitest';
import { isAbortError } from '../src/core/generation';
import type { Piece, Tokenizer } from '../src/core/tokenizer';
import { loadQwenTokenizer } from '../src/engines/qwen-tokenizer';
import { cutToTokens, FOREIGN_VOCABULARY_FACTOR, slackTokens, WllamaEngine } from '../src/engines/wllama/engine';
import { WllamaHost } from '../src/engines/wllama/host';
import {
  type CompletionChunk,
  type CompletionParams,
  cachedAsset,
  type LoadParams,
  type RawParams,
  type RawReply,
  RUNTIME_CACHE,
  type WllamaDeps,
  type WllamaRuntime,
} from '../src/engines/wllama/runtime';

/** One token per word (with its trailing space): easy to reason about. */
const words: Tokenizer = {
  name: 'words',
  *pieces(text: string): Generator<Piece> {
    for (const m of text.matchAll(/\s*\S+\s*/g)) yield { start: m.index, end: m.index + m[0].length, tokens: 1 };
  },
  count(text: string) {
    return [...this.pieces(text)].length;
  },
  encode: (text: string) =>
    text
      .split(/\s+/)
      .filter(Boolean)
      .map((_, i) => i),
  decode: () => '',
};

interface StubOptions {
  nCtxTrain?: number;
  qwen?: boolean;
  /** Tokens of the chat template around the user message. */
  overhead?: number;
  /** Model tokens per app token. */
  ratio?: number;
  /** The reply, word by word; `max_tokens` cuts it. */
  reply?: string[];
  /** Milliseconds between streamed tokens. */
  tokenMs?: number;
  loadError?: Error;
}

/** A stand-in for Wllama with llama-server's behaviour: the context is a hard limit, abort rejects, timings come last. */
class StubRuntime implements WllamaRuntime {
  static created: StubRuntime[] = [];
  params: (LoadParams & { url?: string; files?: number }) | null = null;
  requests: CompletionParams[] = [];
  raw: RawParams[] = [];
  exited = false;
  busy = false;
  overlapped = false;

  constructor(private readonly o: StubOptions) {
    StubRuntime.created.push(this);
  }

  async loadModelFromUrl(url: string, params: LoadParams & { progressCallback?(p: { loaded: number; total: number }): void }) {
    if (this.o.loadError) throw this.o.loadError;
    params.progressCallback?.({ loaded: 10, total: 10 });
    this.params = { ...params, url };
  }
  async loadModel(files: Blob[], params: LoadParams) {
    this.params = { ...params, files: files.length };
  }
  getLoadedContextInfo(): ReturnType<WllamaRuntime['getLoadedContextInfo']> {
    return {
      n_ctx: this.params!.n_ctx,
      n_ctx_train: this.o.nCtxTrain ?? 32768,
      n_vocab: this.o.qwen === false ? 32000 : 151936,
      metadata: this.o.qwen === false ? { 'general.architecture': 'llama' } : { 'general.architecture': 'qwen2', 'tokenizer.ggml.pre': 'qwen2' },
    };
  }
  getNumThreads() {
    return this.params!.n_threads;
  }
  async exit() {
    this.exited = true;
  }
  async createCompletion(options: RawParams & { stream: false }): Promise<RawReply> {
    this.raw.push(options);
    const prompt = words.count(options.prompt);
    if (prompt >= this.params!.n_ctx)
      throw new Error(`request (${prompt} tokens) exceeds the available context size (${this.params!.n_ctx} tokens), try increasing it`);
    const reply = (this.o.reply ?? ['memory', 'words', 'here']).slice(0, options.max_tokens);
    return { choices: [{ text: reply.join(' '), finish_reason: 'stop' }], usage: { prompt_tokens: prompt, completion_tokens: reply.length } };
  }
  async createChatCompletion(options: CompletionParams & { stream: true; onData(chunk: CompletionChunk): void }) {
    if (this.exited) throw new Error('Module is not initialized');
    if (this.busy) this.overlapped = true;
    this.busy = true;
    try {
      this.requests.push(options);
      const content = options.messages.reduce((n, m) => n + words.count(m.content), 0);
      const prompt = (this.o.overhead ?? 20) + Math.ceil(content * (this.o.ratio ?? 1));
      const nCtx = this.params!.n_ctx;
      if (prompt >= nCtx) throw new Error(`request (${prompt} tokens) exceeds the available context size (${nCtx} tokens), try increasing it`);
      const reply = this.o.reply ?? ['memory', 'words', 'here'];
      let n = 0;
      for (const word of reply) {
        if (n >= options.max_tokens || prompt + n >= nCtx) break;
        if (options.abortSignal?.aborted) {
          const e = new Error('Operation aborted');
          e.name = 'AbortError';
          throw e;
        }
        await new Promise((r) => setTimeout(r, this.o.tokenMs ?? 0));
        options.onData({ choices: [{ delta: { content: `${n ? ' ' : ''}${word}` } }] });
        n++;
      }
      const finish = n < reply.length ? 'length' : 'stop';
      options.onData({
        choices: [{ delta: {}, finish_reason: finish }],
        timings: { cache_n: 3, prompt_n: prompt - 3, prompt_ms: 40, prompt_per_second: 500, predicted_n: n, predicted_per_second: 25 },
      });
    } finally {
      this.busy = false;
    }
  }
}

function deps(o: StubOptions = {}, extra: Partial<WllamaDeps> = {}): WllamaDeps {
  return {
    newRuntime: async () => new StubRuntime(o),
    tokenizer: async () => words,
    openLocal: async () => [new Blob(['GGUF'])],
    isolated: true,
    hardwareConcurrency: 8,
    ...extra,
  };
}

const URL_CONFIG = { modelUrl: 'https://example.org/m.gguf' };
const user = (content: string) => [{ role: 'user' as const, content }];

describe('WllamaEngine', () => {
  it('plans with the trained context, less the chat template and slack, for a Qwen GGUF', async () => {
    const engine = await WllamaEngine.create({ ...URL_CONFIG, contextTokens: 8192 }, deps({ nCtxTrain: 32768, overhead: 20 }), new WllamaHost());
    expect(engine.qwenVocabulary).toBe(true);
    expect(engine.overhead).toBe(20);
    expect(engine.contextWindow).toBe(8192 - 20 - slackTokens(8192));
  });

  it("caps the window by the model's trained context and scales it for a foreign vocabulary", async () => {
    const engine = await WllamaEngine.create(URL_CONFIG, deps({ nCtxTrain: 4096, qwen: false, overhead: 28 }), new WllamaHost());
    expect(engine.qwenVocabulary).toBe(false);
    expect(engine.contextWindow).toBe(Math.floor((4096 - 28 - slackTokens(4096)) / FOREIGN_VOCABULARY_FACTOR));
  });

  it('loads on the CPU, with no context shift, the model chat template and threads only when isolated', async () => {
    StubRuntime.created = [];
    await WllamaEngine.create({ ...URL_CONFIG, threads: 4 }, deps(), new WllamaHost());
    const loaded = StubRuntime.created.at(-1)!.params!;
    expect(loaded).toMatchObject({ url: URL_CONFIG.modelUrl, n_gpu_layers: 0, ctx_shift: false, jinja: true, n_threads: 4 });
    const single = await WllamaEngine.create({ ...URL_CONFIG, threads: 4 }, deps({}, { isolated: false }), new WllamaHost());
    expect(StubRuntime.created.at(-1)!.params!.n_threads).toBe(1);
    expect(single.threads).toBe(1);
  });

  it('streams tokens, reports usage from the timings and stops with "length" at max_tokens', async () => {
    const engine = await WllamaEngine.create(URL_CONFIG, deps({ reply: ['a', 'b', 'c', 'd', 'e'] }), new WllamaHost());
    const deltas: string[] = [];
    const result = await engine.generate(user('one two three'), { maxTokens: 3, onToken: (d) => deltas.push(d), temperature: 0.7, topP: 0.95, seed: 5 });
    expect(deltas).toEqual(['a', ' b', ' c']);
    expect(result).toMatchObject({ text: 'a b c', finishReason: 'length' });
    expect(result.usage).toMatchObject({ promptTokens: 23, completionTokens: 3, prefillTokensPerSecond: 500, decodeTokensPerSecond: 25 });
    const sent = StubRuntime.created.at(-1)!.requests.at(-1)!;
    expect(sent).toMatchObject({ max_tokens: 3, temperature: 0.7, top_p: 0.95, seed: 5 });
    const stop = await engine.generate(user('x'), { maxTokens: 10 });
    expect(stop.finishReason).toBe('stop');
  });

  it("allocates the run's planned context, rounded to 256, and keeps one that is not more than twice too big", async () => {
    StubRuntime.created = [];
    const engine = await WllamaEngine.create(URL_CONFIG, deps({ overhead: 20 }), new WllamaHost());
    expect(StubRuntime.created.at(-1)!.params!.n_ctx).toBe(8192);
    await engine.prepare(1000);
    const need = Math.ceil((20 + 1000 + slackTokens(1000)) / 256) * 256;
    expect(StubRuntime.created.at(-1)!.params!.n_ctx).toBe(need);
    const loads = StubRuntime.created.length;
    await engine.prepare(700); // the 1000-token run may still be reading: no shrinking below it
    expect(StubRuntime.created.length).toBe(loads);
    await engine.prepare(3000);
    expect(StubRuntime.created.at(-1)!.params!.n_ctx).toBe(Math.ceil((20 + 3000 + slackTokens(3000)) / 256) * 256);
  });

  it('refuses a step too big for the model before sending it, and says what to change', async () => {
    const engine = await WllamaEngine.create({ ...URL_CONFIG, contextTokens: 512 }, deps({ nCtxTrain: 512 }), new WllamaHost());
    const runtime = StubRuntime.created.at(-1)!;
    const sent = runtime.requests.length;
    const error = await engine.generate(user('w '.repeat(600)), { maxTokens: 64 }).catch((e: Error) => e);
    expect(error).toMatchObject({ name: 'ContextWindowSizeExceededError' });
    expect((error as Error).message).toMatch(/smaller chunk size/);
    expect(runtime.requests.length).toBe(sent);
  });

  it("turns llama.cpp's context overflow into a clear error: the prompt is never cut", async () => {
    // The model counts 3 tokens per app token, far beyond the plan's 1.5: the check before sending cannot know.
    const engine = await WllamaEngine.create({ ...URL_CONFIG, contextTokens: 1024 }, deps({ qwen: false, ratio: 3 }), new WllamaHost());
    await engine.prepare(300);
    const error = await engine.generate(user('w '.repeat(400)), { maxTokens: 16 }).catch((e: Error) => e);
    expect(error).toMatchObject({ name: 'ContextWindowSizeExceededError' });
    expect((error as Error).message).toMatch(/tokens for this model, more than the \d+-token context.*nothing was cut/);
  });

  it('fails a reply that the context cut short instead of keeping it', async () => {
    const host = new WllamaHost();
    const engine = await WllamaEngine.create({ ...URL_CONFIG, contextTokens: 1024 }, deps({ qwen: false, ratio: 2, reply: Array(50).fill('w') }), host);
    await engine.prepare(100);
    // 256-token context; a prompt of ~20 + 2×110 model tokens leaves room for fewer than 40 reply tokens.
    const error = await engine.generate(user('w '.repeat(110)), { maxTokens: 40 }).catch((e: Error) => e);
    expect(error).toMatchObject({ name: 'ContextWindowSizeExceededError' });
    expect((error as Error).message).toMatch(/filled up after \d+ of 40 reply tokens/);
  });

  it('learns how the model counts and refuses a step its measured ratio would overflow', async () => {
    const engine = await WllamaEngine.create({ ...URL_CONFIG, contextTokens: 2048 }, deps({ qwen: false, ratio: 2 }), new WllamaHost());
    await engine.generate(user('w '.repeat(100)), { maxTokens: 8 }); // measured: 2 model tokens per app token
    const runtime = StubRuntime.created.at(-1)!;
    const sent = runtime.requests.length;
    // Fits the plan's 1.5× (20 + 1.5 × 1200 + 64 < 2048), not the measured 2.2×.
    const error = await engine.generate(user('w '.repeat(1200)), { maxTokens: 64 }).catch((e: Error) => e);
    expect(error).toMatchObject({ name: 'ContextWindowSizeExceededError' });
    expect(runtime.requests.length).toBe(sent);
  });

  it('keeps a memory within the cap as the app counts it', async () => {
    const qwen = await loadQwenTokenizer();
    // Llama-style pieces that Qwen's vocabulary splits further: 64 model tokens can be more than 64 app tokens.
    const reply = Array.from({ length: 64 }, (_, i) => ['рі', 'mistू', 'corpools', 'ей', 'doitYemor'][i % 5]!);
    const engine = await WllamaEngine.create(URL_CONFIG, deps({ qwen: false, reply }, { tokenizer: async () => qwen }), new WllamaHost());
    const result = await engine.generate(user('some text'), { maxTokens: 64 });
    expect(qwen.count(reply.join(' '))).toBeGreaterThan(64);
    expect(qwen.count(result.text.trim())).toBeLessThanOrEqual(64);
    expect(result.finishReason).toBe('length');
  });

  it('continues a raw prompt as given, with the sampling asked for and every other sampler neutral', async () => {
    const engine = await WllamaEngine.create(URL_CONFIG, deps({ reply: ['a', 'b', 'c'] }), new WllamaHost());
    const prompt = '<|im_start|>user\nwhere is it<|im_end|>\n<|im_start|>assistant\n';
    const result = await engine.completer.complete({ prompt, maxTokens: 2, temperature: 0.7, topP: 0.95 });
    expect(result).toEqual({ text: 'a b', promptTokens: 5, completionTokens: 2 });
    const sent = StubRuntime.created.at(-1)!.raw.at(-1)!;
    expect(sent).toMatchObject({
      prompt,
      max_tokens: 2,
      temperature: 0.7,
      top_p: 0.95,
      top_k: 0,
      min_p: 0,
      repeat_penalty: 1,
      cache_prompt: true,
      stream: false,
    });
    const aborted = new AbortController();
    aborted.abort();
    expect(
      isAbortError(await engine.completer.complete({ prompt, maxTokens: 2, temperature: 0, topP: 1, signal: aborted.signal }).catch((e: unknown) => e)),
    ).toBe(true);
    const long = 'word '.repeat(40_000);
    await expect(engine.completer.complete({ prompt: long, maxTokens: 2, temperature: 0, topP: 1 })).rejects.toThrow(/nothing was cut/);
  });

  it('stops at once on abort, with the abort error, and the model answers the next request', async () => {
    const engine = await WllamaEngine.create(URL_CONFIG, deps({ reply: Array(100).fill('w') }), new WllamaHost());
    const controller = new AbortController();
    const streamed: string[] = [];
    const onToken = (text: string) => {
      streamed.push(text);
      controller.abort();
    };
    const error = await engine.generate(user('x'), { maxTokens: 100, signal: controller.signal, onToken }).catch((e: unknown) => e);
    expect(isAbortError(error)).toBe(true);
    // Stopped at the token the abort came with: none of the 99 after it was written.
    expect(streamed).toEqual(['w']);
    await expect(engine.generate(user('x'), { maxTokens: 2 })).resolves.toMatchObject({ text: 'w w' });
  });

  it('takes requests one at a time, and loading another model unloads the first', async () => {
    StubRuntime.created = [];
    const host = new WllamaHost();
    const a = await WllamaEngine.create(URL_CONFIG, deps({ tokenMs: 2 }), host);
    const runtimeA = StubRuntime.created.at(-1)!;
    await Promise.all([a.generate(user('x'), { maxTokens: 3 }), a.generate(user('y'), { maxTokens: 3 })]);
    expect(runtimeA.overlapped).toBe(false);
    const b = await WllamaEngine.create({ modelUrl: 'https://example.org/other.gguf' }, deps(), host);
    expect(runtimeA.exited).toBe(true);
    await b.generate(user('x'), { maxTokens: 1 });
    // A loads again when it is asked.
    await expect(a.generate(user('x'), { maxTokens: 1 })).resolves.toMatchObject({ text: 'memory' });
    expect(StubRuntime.created.at(-1)!.params!.url).toBe(URL_CONFIG.modelUrl);
  });

  it('loads picked files from local storage, never from a URL', async () => {
    StubRuntime.created = [];
    const opened: string[] = [];
    await WllamaEngine.create(
      { localModel: 'm-100-1', localModelName: 'm.gguf' },
      deps({}, { openLocal: async (key) => (opened.push(key), [new Blob(['a']), new Blob(['b'])]) }),
      new WllamaHost(),
    );
    expect(opened).toEqual(['m-100-1']);
    expect(StubRuntime.created.at(-1)!.params).toMatchObject({ files: 2 });
    expect(StubRuntime.created.at(-1)!.params!.url).toBeUndefined();
  });

  it('says what to check when the download fails', async () => {
    const error = await WllamaEngine.create(URL_CONFIG, deps({ loadError: new TypeError('Failed to fetch') }), new WllamaHost()).catch((e: Error) => e);
    expect(error).toMatchObject({ name: 'ModelDownloadError' });
    expect((error as Error).message).toMatch(/CORS/);
  });

  it('measures prompt and writing speed', async () => {
    const engine = await WllamaEngine.create({ ...URL_CONFIG, threads: 2 }, deps({ reply: Array(40).fill('w') }), new WllamaHost());
    await expect(engine.measureSpeed()).resolves.toMatchObject({
      prefillTokensPerSecond: 500,
      decodeTokensPerSecond: 25,
      completionTokens: 32,
      source: 'reported',
      threads: 2,
    });
    const request = StubRuntime.created.at(-1)!.requests.at(-1)!;
    expect(request).toMatchObject({ max_tokens: 32, ignore_eos: true, cache_prompt: false });
  });
});

describe('cutToTokens', () => {
  it('cuts between tokens and never exceeds the limit', async () => {
    const qwen = await loadQwenTokenizer();
    const text = 'Gibberish like purecius arrested Meanmense prawpom corpoolsейlaslopediaotimes doitYemor Columb рі mistू again and again.';
    for (let max = 0; max <= qwen.count(text); max++) {
      const cut = cutToTokens(qwen, text, max);
      expect(text.startsWith(cut)).toBe(true);
      expect(qwen.count(cut)).toBeLessThanOrEqual(max);
    }
  });
});

describe('cachedAsset', () => {
  it('serves the wasm from Cache Storage after the first fetch, and drops older releases', async () => {
    const stored = new Map<string, Response>([['https://app/assets/wllama-OLD.wasm', new Response('old')]]);
    const cache = {
      match: async (url: string) => stored.get(url)?.clone(),
      put: async (url: string, r: Response) => void stored.set(url, r),
      keys: async () => [...stored.keys()].map((url) => ({ url })),
      delete: async (r: { url: string }) => stored.delete(r.url),
    };
    const caches = { open: async (name: string) => (expect(name).toBe(RUNTIME_CACHE), cache) } as unknown as CacheStorage;
    const fetch = vi.fn(async () => new Response('wasm bytes', { headers: { 'Content-Type': 'application/wasm' } }));
    vi.stubGlobal('fetch', fetch);
    try {
      const first = await cachedAsset('https://app/assets/wllama-NEW.wasm', caches);
      const second = await cachedAsset('https://app/assets/wllama-NEW.wasm', caches);
      expect(fetch).toHaveBeenCalledTimes(1);
      expect(first).toMatch(/^blob:/);
      expect(await resolveObjectURL(second)?.text()).toBe('wasm bytes');
      expect(second).toMatch(/^blob:/);
      expect([...stored.keys()]).toEqual(['https://app/assets/wllama-NEW.wasm']);
    } finally {
      vi.unstubAllGlobals();
    }
  });

  it('falls back to the plain URL without Cache Storage', async () => {
    await expect(cachedAsset('https://app/a.wasm', undefined)).resolves.toBe('https://app/a.wasm');
  });
});
