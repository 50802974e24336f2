import { prebuiltAppConfig } from '@mlc-ai/web-llm';
import { beforeAll, describe, expect, it } from 'vitest';
import { DraftLength, MAX_DRAFT } from '../src/core/draft-length';
import { memoryLoop } from '../src/core/loop';
import { DEFAULT_TEMPLATES } from '../src/core/prompts';
import type { Tokenizer } from '../src/core/tokenizer';
import { loadQwenTokenizer } from '../src/engines/qwen-tokenizer';
import type { GpuCapability } from '../src/engines/webllm/check/webgpu';
import { chatOverhead, createWebLLMEngine, MIN_WINDOW, WebLLMEngine } from '../src/engines/webllm/engine';
import { GpuSession } from '../src/engines/webllm/gpu-session';
import { SHIPPED_WEBLLM } from '../src/engines/webllm/versions';
import { ContextWindowExceededError, DeviceLostError, EngineSettingsError } from '../src/engines/errors';
import type { Mlc, StreamChunk } from '../src/engines/webllm/driver/mlc';
import { type WebLLMDeps } from '../src/engines/webllm/resolve';
import { customEntry, type ModelEntry, qwenModels } from '../src/engines/webllm/models/models';
import { until } from './helpers';

let tok: Tokenizer;
beforeAll(async () => {
  tok = await loadQwenTokenizer();
});

const MODEL: ModelEntry = customEntry({
  id: 'custom:test',
  label: 'Test model',
  modelUrl: 'https://hf.example/org/Test-MLC',
  libUrl: 'https://libs.example/test.wasm',
  contextLimit: 32768,
});

function named(name: string, message = name): Error {
  return Object.assign(new Error(message), { name });
}

/** MLCEngine in a box: records reloads and requests, streams the words it is given, honours interruptGenerate. */
class StubMlc implements Mlc {
  reloads: { id: string; opts?: Record<string, unknown> }[] = [];
  requests: Record<string, unknown>[] = [];
  unloads = 0;
  interrupted = 0;
  active = 0;
  maxActive = 0;
  words = ['Alice ', 'met ', 'Bob.'];
  finish = 'stop';
  reloadError: Error | undefined;
  streamError: Error | undefined;
  /** Words streamed so far, over every request. */
  written = 0;
  /** Resolves when the stream has produced its first word. */
  started!: Promise<void>;
  private markStarted: () => void = () => undefined;
  private stop = false;

  constructor() {
    this.reset();
  }

  private reset(): void {
    this.started = new Promise((r) => (this.markStarted = r));
  }

  reload = async (id: string, opts?: Record<string, unknown>) => {
    this.reloads.push({ id, opts });
    if (this.reloadError) throw this.reloadError;
  };
  unload = async () => {
    this.unloads++;
  };
  interruptGenerate = () => {
    this.interrupted++;
    this.stop = true;
  };
  chat = {
    completions: {
      create: async (request: Record<string, unknown>) => {
        this.requests.push(request);
        this.stop = false;
        return this.stream();
      },
    },
  };
  /** Raw completions stream their pieces as `text`, as WebLLM's do. */
  completions = {
    create: async (request: Record<string, unknown>) => {
      this.requests.push(request);
      this.stop = false;
      return this.stream('text');
    },
  };

  private async *stream(shape: 'chat' | 'text' = 'chat'): AsyncGenerator<StreamChunk> {
    this.active++;
    this.maxActive = Math.max(this.maxActive, this.active);
    try {
      for (const w of this.words) {
        await new Promise((r) => setTimeout(r, 5));
        if (this.stop) {
          yield { choices: [{ delta: {}, finish_reason: 'abort' }] };
          return;
        }
        if (this.streamError) throw this.streamError;
        this.written++;
        yield { choices: [shape === 'chat' ? { delta: { content: w }, finish_reason: null } : { text: w, finish_reason: null }] };
        this.markStarted();
      }
      yield { choices: [{ delta: {}, finish_reason: this.finish }] };
      yield {
        choices: [],
        usage: { prompt_tokens: 120, completion_tokens: 3, extra: { prefill_tokens_per_s: 900, decode_tokens_per_s: 30, time_to_first_token_s: 0.4 } },
      };
    } finally {
      this.active--;
      this.reset();
    }
  }
}

function setup(limit = 32768, overhead = 40) {
  const mlc = new StubMlc();
  const factories: unknown[] = [];
  const downloads: string[] = [];
  const session = new GpuSession(
    async (appConfig) => {
      factories.push(appConfig);
      return mlc;
    },
    async (model) => {
      downloads.push((model as ModelEntry).id);
      return { bytesTotal: 0, bytesFetched: 0 };
    },
  );
  const engine = new WebLLMEngine({ tokenizer: tok, model: MODEL, limit, overhead, gpu: session });
  return { mlc, session, engine, factories, downloads };
}

const user = (content: string) => [{ role: 'user' as const, content }];

describe('the WebLLM engine: context window planning', () => {
  it('offers the planner the model limit less the chat template', () => {
    expect(setup(32768, 40).engine.contextWindow).toBe(32728);
  });

  it('loads at least 8192 tokens, in steps of 1024, never past the model limit', () => {
    const { engine } = setup(32768, 40);
    expect(engine.windowFor(100)).toBe(MIN_WINDOW);
    expect(engine.windowFor(8152)).toBe(8192);
    expect(engine.windowFor(8153)).toBe(9216);
    expect(engine.windowFor(20_000)).toBe(20_480);
    expect(engine.windowFor(40_000)).toBe(32768);
  });

  it('prepare loads with context_window_size for the run, keeps a window that fits and reloads for a larger one', async () => {
    const { engine, mlc, factories, downloads } = setup();
    await engine.prepare(7300);
    expect(mlc.reloads).toEqual([{ id: MODEL.id, opts: { context_window_size: 8192 } }]);
    expect(factories).toEqual([{ model_list: [{ model: MODEL.modelUrl, model_id: MODEL.id, model_lib: MODEL.libUrl }], cacheBackend: 'cache' }]);
    expect(downloads).toEqual([MODEL.id]); // our downloader fills the cache first, resuming if need be
    await engine.prepare(6000);
    expect(mlc.reloads).toHaveLength(1);
    await engine.prepare(15_000);
    expect(mlc.reloads.at(-1)).toEqual({ id: MODEL.id, opts: { context_window_size: 15_360 } });
    expect(mlc.unloads).toBe(1);
  });

  it('after a second device loss in a row loads only what the run needs', async () => {
    const { engine, mlc } = setup();
    await engine.prepare(7300);
    await engine.recover(1);
    await engine.prepare(7300);
    expect(mlc.reloads.at(-1)?.opts).toEqual({ context_window_size: 8192 });
    await engine.recover(2);
    await engine.prepare(7300);
    expect(mlc.reloads.at(-1)?.opts).toEqual({ context_window_size: 7424 }); // 7300 + 40, rounded to 256
  });

  /** A session whose downloads wait for `finish` and heed their signal, as the real downloader does. */
  function slowDownloads(mlc: Mlc) {
    const runs: { signal: AbortSignal; finish(): void }[] = [];
    const session = new GpuSession(
      async () => mlc,
      (_, o) =>
        new Promise((resolve, reject) => {
          const signal = o!.signal!;
          signal.addEventListener('abort', () => reject(signal.reason));
          runs.push({ signal, finish: () => resolve({ bytesTotal: 1, bytesFetched: 1 }) });
        }),
    );
    return { session, runs };
  }

  it('a run paused while its model downloads stops waiting at once and stops the download it started', async () => {
    const mlc = new StubMlc();
    const { session, runs } = slowDownloads(mlc);
    const engine = new WebLLMEngine({ tokenizer: tok, model: MODEL, limit: 32768, overhead: 40, gpu: session });
    const controller = new AbortController();
    const prepared = engine.prepare(7000, controller.signal);
    await until(() => runs.length === 1);
    controller.abort();
    await expect(prepared).rejects.toMatchObject({ name: 'AbortError' });
    expect(runs[0]!.signal.aborted).toBe(true); // mid-shard: the downloader keeps what it received
    expect(mlc.reloads).toEqual([]);
  });

  it('a download asked for in Models goes on when a run waiting on it pauses, until Stop download', async () => {
    const mlc = new StubMlc();
    const { session, runs } = slowDownloads(mlc);
    const fromModels = session.download(MODEL);
    const controller = new AbortController();
    const prepared = new WebLLMEngine({ tokenizer: tok, model: MODEL, limit: 32768, overhead: 40, gpu: session }).prepare(7000, controller.signal);
    await until(() => runs.length === 1);
    controller.abort();
    await expect(prepared).rejects.toMatchObject({ name: 'AbortError' });
    expect(runs).toHaveLength(1); // one download for both
    expect(runs[0]!.signal.aborted).toBe(false);
    expect(session.stopDownload(MODEL.id)).toBe(true);
    expect(session.stopDownload(MODEL.id)).toBe(false);
    // Download pressed again at once: a new download, once the stopped one has stored its last part.
    const again = session.download(MODEL);
    await expect(fromModels).rejects.toMatchObject({ name: 'AbortError' });
    await until(() => runs.length === 2);
    expect(runs).toHaveLength(2);
    runs[1]!.finish();
    await expect(again).resolves.toEqual({ bytesTotal: 1, bytesFetched: 1 });
  });

  it('a run paused while WebLLM loads from its cache stops waiting at once; the load ends in the background and is not done twice', async () => {
    const mlc = new StubMlc();
    let loaded: () => void = () => undefined;
    mlc.reload = async (id, opts) => {
      mlc.reloads.push({ id, opts });
      await new Promise<void>((r) => (loaded = r)); // WebLLM reads shards onto the GPU heeding no signal
    };
    const session = new GpuSession(
      async () => mlc,
      async () => ({ bytesTotal: 0, bytesFetched: 0 }),
    );
    const engine = new WebLLMEngine({ tokenizer: tok, model: MODEL, limit: 32768, overhead: 40, gpu: session });
    const controller = new AbortController();
    const prepared = engine.prepare(7000, controller.signal);
    await until(() => mlc.reloads.length === 1);
    controller.abort();
    await expect(prepared).rejects.toMatchObject({ name: 'AbortError' });
    expect(session.current).toBeUndefined();
    // The next run waits for the load under way instead of starting another.
    const next = engine.generate(user('Who met Bob?'), { maxTokens: 16 });
    await new Promise((r) => setTimeout(r, 10));
    expect(mlc.requests).toHaveLength(0);
    loaded();
    expect((await next).text).toBe('Alice met Bob.');
    expect(mlc.reloads).toHaveLength(1);
    expect(session.current).toEqual({ id: MODEL.id, window: 8192 });
  });

  it('refuses a step longer than the model limit before touching the GPU', async () => {
    const { engine, mlc } = setup(8192);
    const error = await engine.generate(user('word '.repeat(9000)), { maxTokens: 1024 }).catch((e: unknown) => e);
    expect((error as Error).name).toBe('ContextWindowSizeExceededError');
    expect((error as Error).message).toMatch(/Choose a smaller chunk size or memory size/);
    expect(mlc.reloads).toEqual([]);
  });
});

describe('the WebLLM engine: generation', () => {
  it('streams with max_tokens, sampling (penalties neutral) and usage always set, and reports speeds', async () => {
    const { engine, mlc } = setup();
    const deltas: string[] = [];
    const result = await engine.generate(user('Who met Bob?'), { maxTokens: 1024, temperature: 0.7, topP: 0.95, seed: 7, onToken: (d) => deltas.push(d) });
    expect(mlc.requests[0]).toEqual({
      messages: [{ role: 'user', content: 'Who met Bob?' }],
      max_tokens: 1024,
      temperature: 0.7,
      top_p: 0.95,
      seed: 7,
      // mlc-chat-config.json's repetition_penalty (1.05 for Qwen2.5) would apply otherwise.
      repetition_penalty: 1,
      presence_penalty: 0,
      frequency_penalty: 0,
      stream: true,
      stream_options: { include_usage: true },
    });
    expect(mlc.reloads[0]?.opts).toEqual({ context_window_size: 8192 }); // never WebLLM's 4096 default
    expect(deltas).toEqual(['Alice ', 'met ', 'Bob.']);
    expect(result).toEqual({
      text: 'Alice met Bob.',
      finishReason: 'stop',
      usage: { promptTokens: 120, completionTokens: 3, prefillTokensPerSecond: 900, decodeTokensPerSecond: 30, timeToFirstTokenSeconds: 0.4 },
    });
  });

  it('continues a raw prompt as given, without a chat template, on the same loaded model and lock', async () => {
    const { engine, mlc } = setup();
    const prompt = '<|im_start|>user\nWho met Bob?<|im_end|>\n<|im_start|>assistant\n';
    const [result] = await Promise.all([
      engine.completer.complete({ prompt, maxTokens: 64, temperature: 0.7, topP: 0.95 }),
      engine.generate(user('a'), { maxTokens: 8 }),
    ]);
    expect(mlc.requests[0]).toEqual({
      prompt,
      max_tokens: 64,
      temperature: 0.7,
      top_p: 0.95,
      repetition_penalty: 1,
      presence_penalty: 0,
      frequency_penalty: 0,
      stream: true,
      stream_options: { include_usage: true },
    });
    expect(result).toEqual({ text: 'Alice met Bob.', promptTokens: 120, completionTokens: 3 });
    expect(mlc.maxActive).toBe(1);
    await expect(engine.completer.complete({ prompt: 'word '.repeat(40_000), maxTokens: 8, temperature: 0, topP: 1 })).rejects.toThrow(
      ContextWindowExceededError,
    );
  });

  it('refuses MemAgent steps with a Qwen3 model before anything is sent, and continues its raw prompts (InfMem)', async () => {
    const { session, mlc } = setup();
    const qwen3 = qwenModels(prebuiltAppConfig.model_list).find((m) => m.id === 'Qwen3-4B-q4f16_1-MLC')!;
    const engine = new WebLLMEngine({ tokenizer: tok, model: qwen3, limit: 40960, overhead: 40, gpu: session });
    await expect(engine.generate(user('Who met Bob?'), { maxTokens: 8 })).rejects.toThrow(EngineSettingsError);
    await expect(engine.generate(user('Who met Bob?'), { maxTokens: 8 })).rejects.toThrow(/reads with InfMem only/);
    await expect(engine.generateBatch([{ messages: user('a'), options: { maxTokens: 8 } }])).rejects.toThrow(/reads with InfMem only/);
    expect(mlc.requests).toEqual([]);
    const prompt = '<|im_start|>user\nWho met Bob?<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n';
    expect((await engine.completer.complete({ prompt, maxTokens: 8, temperature: 0, topP: 1 })).text).toBe('Alice met Bob.');
    expect(mlc.requests[0]).toMatchObject({ prompt });
  });

  it('passes on finish_reason "length" (a memory cut at the cap)', async () => {
    const { engine, mlc } = setup();
    mlc.finish = 'length';
    expect((await engine.generate(user('q'), { maxTokens: 3 })).finishReason).toBe('length');
  });

  it('stops promptly on abort with interruptGenerate, and the loop stores no partial memory', async () => {
    const { engine, mlc } = setup();
    mlc.words = Array.from({ length: 200 }, (_, i) => `w${i} `);
    const controller = new AbortController();
    const events: unknown[] = [];
    const loop = memoryLoop({
      text: 'One. Two.',
      chunks: [{ start: 0, end: 9, tokens: 4 }],
      question: 'q',
      generator: engine,
      templates: DEFAULT_TEMPLATES,
      memoryTokens: 1024,
      sampling: { temperature: 0.7, topP: 0.95 },
      signal: controller.signal,
    });
    const run = (async () => {
      for await (const e of loop) events.push(e);
    })();
    await mlc.started;
    const written = mlc.written;
    controller.abort();
    await expect(run).rejects.toMatchObject({ name: 'AbortError' });
    // Not one more of the 200 words was written after the abort.
    expect(mlc.written).toBe(written);
    expect(mlc.interrupted).toBe(1);
    expect(events).toEqual([]);
  });

  it('serialises requests and reloads: one step on the GPU at a time', async () => {
    const { engine, mlc } = setup();
    await Promise.all([engine.generate(user('a'), { maxTokens: 8 }), engine.generate(user('b'), { maxTokens: 8 }), engine.prepare(20_000)]);
    expect(mlc.maxActive).toBe(1);
    expect(mlc.requests).toHaveLength(2);
  });

  it('a paused step waiting for the GPU gives up at once', async () => {
    const { engine, mlc } = setup();
    mlc.words = Array.from({ length: 40 }, () => 'x ');
    const first = engine.generate(user('a'), { maxTokens: 64 });
    await mlc.started;
    const controller = new AbortController();
    const second = engine.generate(user('b'), { maxTokens: 64, signal: controller.signal });
    controller.abort();
    await expect(second).rejects.toMatchObject({ name: 'AbortError' });
    await first;
    expect(mlc.requests).toHaveLength(1);
  });
});

describe('the WebLLM engine: errors', () => {
  it('a device lost mid-step says so and frees the GPU, so the next step reloads', async () => {
    const { engine, mlc } = setup();
    mlc.streamError = named('DeviceLostError', 'The WebGPU device was lost while loading the model.');
    const error = (await engine.generate(user('a'), { maxTokens: 8 }).catch((e: unknown) => e)) as Error;
    expect(error).toBeInstanceOf(DeviceLostError);
    expect(error.message).toMatch(/device lost.*smaller model/);
    expect(mlc.unloads).toBe(1);
    mlc.streamError = undefined;
    await engine.generate(user('a'), { maxTokens: 8 });
    expect(mlc.reloads).toHaveLength(2);
  });

  it('a model that was unloaded under us counts as a device loss', async () => {
    const { engine, mlc } = setup();
    mlc.streamError = named('ModelNotLoadedError', 'Model not loaded before trying to complete ChatCompletionRequest.');
    expect(await engine.generate(user('a'), { maxTokens: 8 }).catch((e: Error) => e.name)).toBe('DeviceLostError');
  });

  it('WebLLM refusing a prompt for the window names the window and what to change', async () => {
    const { engine, mlc } = setup();
    mlc.streamError = named(
      'ContextWindowSizeExceededError',
      'Prompt tokens exceed context window size: number of prompt tokens: 9000; context window size: 8192',
    );
    const error = (await engine.generate(user('a'), { maxTokens: 8 }).catch((e: unknown) => e)) as Error;
    expect(error.name).toBe('ContextWindowSizeExceededError');
    expect(error.message).toMatch(/does not fit in the 8192-token context window.*smaller chunk size/);
  });

  it('a model library that fails to compile is named, with where to look', async () => {
    const { engine, mlc, session } = setup();
    mlc.reloadError = named('CompileError', 'WebAssembly.instantiate(): expected magic word 00 61 73 6d');
    const error = (await engine.prepare(7000).catch((e: unknown) => e)) as Error;
    expect(error.name).toBe('ModelLibraryError');
    expect(error.message).toContain(`The model library ${MODEL.libUrl} could not be loaded (CompileError`);
    expect(error.message).toContain('Qwen2-7B-Instruct library');
    expect(session.current).toBeUndefined();
  });

  it('the chat template is counted generously around each prompt', () => {
    const conv = {
      system_template: '<|im_start|>system\n{system_message}<|im_end|>\n',
      system_message: 'You are a helpful assistant.',
      roles: { user: '<|im_start|>user', assistant: '<|im_start|>assistant' },
      seps: ['<|im_end|>\n'],
      role_content_sep: '\n',
      role_empty_sep: '\n',
    };
    const n = chatOverhead({ conv_template: conv }, tok);
    expect(n).toBeGreaterThanOrEqual(32);
    expect(n).toBeGreaterThan(tok.count(conv.system_message) + 8); // plain-text tags count more than the model's special tokens
    expect(chatOverhead({}, tok)).toBe(32);
  });
});

describe('creating the engine', () => {
  const noGpu: GpuCapability = { status: 'no-adapter', fallback: false, shaderF16: false, adapter: '', message: 'no WebGPU here' };
  const softGpu: GpuCapability = { status: 'ok', fallback: true, shaderF16: false, adapter: 'google swiftshader', message: 'slow' };
  const prebuilt = qwenModels([
    {
      model: 'https://huggingface.co/mlc-ai/Qwen2.5-7B-Instruct-q4f16_1-MLC',
      model_id: 'Qwen2.5-7B-Instruct-q4f16_1-MLC',
      model_lib: 'https://libs.example/7b-f16.wasm',
    },
    {
      model: 'https://huggingface.co/mlc-ai/Qwen2.5-7B-Instruct-q4f32_1-MLC',
      model_id: 'Qwen2.5-7B-Instruct-q4f32_1-MLC',
      model_lib: 'https://libs.example/7b-f32.wasm',
    },
  ]);

  function deps(gpu: GpuCapability, calls: string[], quantization = 'q4f32_1'): WebLLMDeps {
    return {
      checkGpu: async () => (calls.push('gpu'), gpu),
      models: async () => (calls.push('models'), prebuilt),
      metadata: async (m) => (calls.push(`metadata ${m.id}`), { config: { context_window_size: 32768, quantization }, tokenizer: new ArrayBuffer(0) }),
      loadTokenizer: async () => tok,
      session: new GpuSession(
        async () => new StubMlc(),
        async () => ({ bytesTotal: 0, bytesFetched: 0 }),
      ),
    };
  }

  it('checks WebGPU before fetching anything', async () => {
    const calls: string[] = [];
    const error = (await createWebLLMEngine({ model: 'Qwen2.5-7B-Instruct-q4f16_1-MLC' }, deps(noGpu, calls)).catch((e: unknown) => e)) as Error;
    expect(error.name).toBe('WebGPUUnavailableError');
    expect(error.message).toBe('no WebGPU here');
    expect(calls).toEqual(['gpu']);
  });

  it('runs the q4f32_1 build where the GPU lacks shader-f16, and plans with the model’s own 32K limit', async () => {
    const calls: string[] = [];
    const engine = await createWebLLMEngine({ model: 'Qwen2.5-7B-Instruct-q4f16_1-MLC' }, deps(softGpu, calls));
    expect(engine.model.id).toBe('Qwen2.5-7B-Instruct-q4f32_1-MLC');
    expect(calls).toEqual(['gpu', 'models', 'metadata Qwen2.5-7B-Instruct-q4f32_1-MLC']);
    expect(engine.limit).toBe(32768);
    expect(engine.contextWindow).toBe(32768 - engine.overhead);
  });

  it('speculates with the run’s own tuner, handed in with each request, up to MAX_DRAFT; a request with none gets one of its own', async () => {
    const engine = await createWebLLMEngine({ model: 'Qwen2.5-7B-Instruct-q4f16_1-MLC' }, deps(softGpu, []));
    expect(engine.speculation?.on).toBe(true);
    const runTuner = new DraftLength();
    const plans = await Promise.all([speculationPlanWith(engine, runTuner), speculationPlanWith(engine, runTuner), speculationPlanWith(engine, undefined)]);
    expect(plans[0]?.tuner).toBe(runTuner);
    expect(plans[1]?.tuner).toBe(runTuner);
    expect(plans[2]?.tuner).toBeInstanceOf(DraftLength);
    expect(plans[2]?.tuner).not.toBe(runTuner);
    expect(plans.every((p) => p?.maxDraft === MAX_DRAFT && p.draft === undefined)).toBe(true);
  });

  /** The plan for one request with `tuner` in its options, the self-check's verdict kept as exact for this model. */
  function speculationPlanWith(engine: WebLLMEngine, tuner: DraftLength | undefined) {
    const kept = { verdict: 'exact' as const, webllm: SHIPPED_WEBLLM.version, library: engine.model.libUrl, checkedAt: 1 };
    engine.speculation = { ...engine.speculation!, shelf: { speed: async () => ({ speculation: kept }) as never, keepSpeculation: async () => true } };
    return engine.speculationPlan(8192, tuner ? { draftTuner: tuner } : {});
  }

  it('a custom model takes its entered limit, and an f16 one is refused on a GPU without shader-f16', async () => {
    const config = {
      model: 'custom:rl',
      label: 'RL-MemAgent-7B',
      modelUrl: 'https://hf.example/me/RL-MemAgent-7B-q4f32_1-MLC',
      libUrl: 'https://libs.example/7b-f32.wasm',
      contextLimit: 16384,
    };
    const engine = await createWebLLMEngine(config, deps(softGpu, []));
    expect(engine.limit).toBe(16384);
    expect(engine.model.modelUrl).toBe('https://hf.example/me/RL-MemAgent-7B-q4f32_1-MLC/resolve/main/');
    const error = (await createWebLLMEngine(config, deps(softGpu, [], 'q4f16_1')).catch((e: unknown) => e)) as Error;
    expect(error.name).toBe('ShaderF16SupportError');
    expect(error.message).toContain('q4f32_1');
  });
});
