import type { SpeedMeasurement } from '../../core/estimate';
import type { CompletionRequest, CompletionResult, RawCompleter } from '../../core/infmem/thinking';
import { abortError, type ChatMessage, type FinishReason, type GenerateOptions, type GenerateResult, isAbortError } from '../../core/generation';
import { DEFAULT_READ_SETTINGS } from '../../core/plan';
import type { Tokenizer } from '../../core/tokenizer';
import type { Engine, EngineConfig } from '../engine';
import { ContextWindowExceededError, ModelRuntimeError } from '../errors';
import { llamaCppParams, llamaCppSampling, stepRequest } from '../request';
import { defaultHost, type LoadProgress, type WllamaHost } from './host';
import { effectiveThreads, isQwenVocabulary, parseWllamaConfig, WLLAMA_ENGINE_ID, type WllamaSettings } from './models';
import { browserDeps, type CompletionChunk, type LoadParams, type WllamaDeps, type WllamaRuntime } from './runtime';

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
      throw await this.failure(e, signal);
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

  /** What llama.cpp's failure means for the run: an abort, a context too small (nothing was cut), or a crashed runtime. */
  private async failure(e: unknown, signal: AbortSignal | undefined): Promise<Error> {
    if (isAbortError(e) || signal?.aborted) return abortError();
    const message = e instanceof Error ? e.message : String(e);
    const over = /request \((\d+) tokens\) exceeds the available context size \((\d+) tokens\)/.exec(message);
    if (over) {
      return new ContextWindowExceededError(
        `This step's prompt is ${over[1]} tokens for this model, more than the ${over[2]}-token context it was loaded with; ` +
          'nothing was cut. Choose a smaller chunk size or memory size and start the run again.',
        { cause: e },
      );
    }
    // A crashed runtime cannot answer again: the next request loads the model afresh.
    if (e instanceof Error && e.name === 'WllamaRuntimeError') await this.host.unload();
    return new ModelRuntimeError(`llama.cpp stopped with an error: ${message}`, { cause: e });
  }

  /** Raw completions: a prompt rendered by the caller (InfMem's chat text), continued by the model, one request at a time. */
  readonly completer: RawCompleter = {
    complete: (request) => {
      if (request.signal?.aborted) return Promise.reject(abortError());
      return this.host.exclusive(() => this.completeNow(request));
    },
  };

  private async completeNow(request: CompletionRequest): Promise<CompletionResult> {
    const { signal, maxTokens } = request;
    if (signal?.aborted) throw abortError();
    const factor = this.qwenVocabulary ? 1 : Math.max(this.factor, this.measuredFactor * 1.1);
    const { runtime } = await this.ensureLoaded(Math.ceil(this.tokenizer.count(request.prompt) * factor) + maxTokens + slackTokens(maxTokens));
    let reply;
    try {
      const sampling = llamaCppSampling({ maxTokens, temperature: request.temperature, topP: request.topP });
      reply = await runtime.createCompletion({ prompt: request.prompt, ...sampling, cache_prompt: true, abortSignal: signal, stream: false });
    } catch (e) {
      throw await this.failure(e, signal);
    }
    if (signal?.aborted) throw abortError();
    const usage = reply.usage;
    return { text: reply.choices[0]?.text ?? '', ...(usage && { promptTokens: usage.prompt_tokens, completionTokens: usage.completion_tokens }) };
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
