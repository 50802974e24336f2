import { abortError, type ChatMessage, type FinishReason, type GenerateOptions, type GenerateResult } from '../../core/generation';
import type { SpeedMeasurement } from '../../core/estimate';
import { errorNamed } from '../errors';
import type { Tokenizer } from '../../core/tokenizer';
import type { Engine, EngineConfig } from '../engine';
import { type ChatConfigLike, downloadModel, ensureConfigAndTokenizer, ModelDownloadError, scopeTuning } from './model-download';
import { stepRequest, webllmRequest } from '../request';
import { type TokenizerConfigLike, webllmSystemMessage } from './system-message';
import { fetchTokenizerConfig } from './tokenizer-config';
import { checkWebGPU, type GpuCapability } from './webgpu';
import { loadModelTokenizer } from './tokenizer';
import { appConfigFor, chooseModel, entryFromConfig, type ModelEntry, prebuiltModels, QWEN_CONTEXT_LIMIT, reportModelProgress } from './models';
import { loadedContextWindow, loadOptions, SHIPPED_WEBLLM, type WebLLMAppConfig, type WebLLMVersion, writtenTokens } from './versions';

/** One MemAgent step in training took ~8K tokens; never less, whatever a small chunk would allow. */
export const MIN_WINDOW = 8192;

/** MemAgent's evaluation served the model with no repetition penalty; Qwen's WebLLM config would apply 1.05. */
export const REPETITION_PENALTY = 1;

/** The slice of WebLLM's MLCEngine used here; unit tests put a stub in its place. */
export interface Mlc {
  reload(modelId: string, chatOpts?: Record<string, unknown>): Promise<void>;
  unload(): Promise<void>;
  interruptGenerate(): unknown;
  chat: { completions: { create(request: Record<string, unknown>): Promise<AsyncIterable<StreamChunk>> } };
}

export interface StreamChunk {
  choices: { delta?: { content?: string | null }; finish_reason?: string | null }[];
  usage?: {
    prompt_tokens: number;
    completion_tokens: number;
    extra?: { prefill_tokens_per_s?: number; decode_tokens_per_s?: number; time_to_first_token_s?: number };
  };
}

export type MlcFactory = (appConfig: WebLLMAppConfig, onProgress: (r: { progress: number; text: string }) => void) => Promise<Mlc>;

const webllmFactory: MlcFactory = async (appConfig, onProgress) => {
  const { MLCEngine } = await import('@mlc-ai/web-llm');
  return new MLCEngine({ appConfig, initProgressCallback: onProgress, logLevel: 'WARN' }) as unknown as Mlc;
};

const named = errorNamed;

/** WebLLM's errors (matched by name: they are not exported) as messages that say what to do next. */
export function explainError(e: unknown, model: ModelEntry, phase: 'load' | 'generate', window?: number, webllm: WebLLMVersion = SHIPPED_WEBLLM): Error {
  if (!(e instanceof Error)) return new Error(String(e));
  const detail = e.message.split('\n')[0];
  switch (e.name) {
    case 'AbortError':
    case 'ModelDownloadError':
    case 'WebGPUUnavailableError':
    case 'ContextWindowError':
      return e;
    case 'WebGPUNotAvailableError':
    case 'WebGPUNotFoundError':
      return named('WebGPUUnavailableError', 'WebGPU stopped being available to this page. Reload the page; if it persists, choose another engine.');
    case 'ShaderF16SupportError':
    case 'FeatureSupportError':
      return named(e.name, `${model.label} needs the shader-f16 GPU feature, which this GPU lacks. Choose the q4f32_1 build of the model instead.`);
    case 'DeviceLostError':
    case 'ModelNotLoadedError':
      return named(
        'DeviceLostError',
        'The GPU stopped responding (device lost), most often because it ran out of memory. Close other tabs that use the GPU, or choose a smaller model or chunk size.',
      );
    case 'ContextWindowSizeExceededError':
      return named(
        e.name,
        `This step's prompt does not fit in the ${window ?? ''}-token context window the model was loaded with (${detail}). Choose a smaller chunk size or memory size and start the run again.`,
      );
    case 'QuotaExceededError':
      return new ModelDownloadError(
        'There is not enough storage for this model. Choose a smaller model, or delete models you no longer need, then try again.',
        'quota',
      );
  }
  if (
    phase === 'load' &&
    (/^(CompileError|LinkError|RuntimeError)$/.test(e.name) || /WebAssembly|wasm|Cannot find function|not a function/i.test(detail ?? ''))
  ) {
    return named(
      'ModelLibraryError',
      `The model library ${model.libUrl} could not be loaded (${e.name}: ${detail}). It must be a WebLLM model library (.wasm) built for this model and for WebLLM ${webllm.version} (mlc-ai/binary-mlc-llm-libs, ${webllm.libraryFolder}); ` +
        'a converted RL-MemAgent-7B uses the Qwen2-7B-Instruct library of the same quantisation. Check the model library URL in Models.',
    );
  }
  if (/device.*lost|lost.*device/i.test(detail ?? '')) return explainError(named('DeviceLostError', detail ?? ''), model, phase, window);
  if (e.name === 'TypeError' && /fetch|network/i.test(detail ?? '')) {
    return new ModelDownloadError(`A model file could not be fetched (${detail}). Check the network, or download the model in Models first.`, 'network');
  }
  return named(e.name, `WebLLM ${phase === 'load' ? 'could not load the model' : 'failed while writing'}: ${detail}`);
}

/** `work`, or an AbortError as soon as `signal` aborts (the work itself goes on). */
function untilAborted<T>(work: Promise<T>, signal?: AbortSignal): Promise<T> {
  if (!signal) return work;
  if (signal.aborted) return Promise.reject(abortError());
  let onAbort: () => void = () => undefined;
  const aborted = new Promise<never>((_, reject) => signal.addEventListener('abort', (onAbort = () => reject(abortError())), { once: true }));
  return Promise.race([work, aborted]).finally(() => signal.removeEventListener('abort', onAbort));
}

/** A lock whose waiters can give up: a paused run must not wait for another run's step. */
class Lock {
  private tail: Promise<void> = Promise.resolve();

  async acquire(signal?: AbortSignal): Promise<() => void> {
    let release!: () => void;
    const mine = new Promise<void>((r) => (release = r));
    const before = this.tail;
    this.tail = before.then(() => mine);
    if (!signal) {
      await before;
      return release;
    }
    signal.throwIfAborted();
    let onAbort: () => void = () => undefined;
    try {
      await Promise.race([before, new Promise<never>((_, reject) => signal.addEventListener('abort', (onAbort = () => reject(abortError())), { once: true }))]);
    } catch (e) {
      before.then(release, release); // keep the queue moving once it would have been our turn
      throw e;
    } finally {
      signal.removeEventListener('abort', onAbort);
    }
    return release;
  }
}

/** A model's download in progress, and who waits on it. */
interface Download {
  done: Promise<unknown>;
  controller: AbortController;
  /** Runs waiting on it that have not stopped. */
  waiters: number;
  /** Someone asked for it without a way to stop (Download in Models): it runs to its end unless stopped there. */
  kept: boolean;
}

/**
 * The one model on the GPU in this worker. Every load and every request goes
 * through its lock, so a reload never cuts into a step being written.
 */
export class GpuSession {
  private mlc: Mlc | undefined;
  private loaded: { id: string; window: number } | undefined;
  private readonly lock = new Lock();
  private readonly downloads = new Map<string, Download>();
  /** A WebLLM load that a stopped run no longer waits for; the lock is held until it ends. */
  private settling: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly factory: MlcFactory = webllmFactory,
    private readonly fetchFiles: typeof downloadModel = downloadModel,
    /** The WebLLM version `factory` makes engines of: what the files are named and the loads and requests carry. */
    readonly webllm: WebLLMVersion = SHIPPED_WEBLLM,
  ) {}

  get current(): { id: string; window: number } | undefined {
    return this.loaded;
  }

  /**
   * Fetches what is missing into WebLLM's caches; one download per model at a
   * time. A download from Models (no `signal`) runs to its end unless
   * stopDownload ends it; one that only runs wait on stops, mid-shard with the
   * received bytes kept, as soon as the last of them pauses or is cancelled.
   */
  download(model: ModelEntry, signal?: AbortSignal): Promise<unknown> {
    if (signal?.aborted) return Promise.reject(abortError());
    let d = this.downloads.get(model.id);
    // One that was just stopped is still storing its last part: a new one starts once it has.
    const stopping = d?.controller.signal.aborted ? d.done.catch(() => undefined) : undefined;
    if (!d || stopping) {
      const report = (state: 'working' | 'done' | 'failed', fraction: number, text: string) =>
        reportModelProgress({ modelId: model.id, phase: 'download', state, fraction, text });
      const controller = new AbortController();
      const start = async () => {
        await stopping;
        controller.signal.throwIfAborted();
        return this.fetchFiles(model, {
          ...scopeTuning(),
          signal: controller.signal,
          onProgress: (p) => report('working', p.fraction, p.text),
          webllm: this.webllm,
        });
      };
      const done = start().then(
        (r) => (report('done', 1, 'All files are downloaded'), r),
        (e: unknown) => {
          const stopped = controller.signal.aborted;
          report('failed', 0, stopped ? 'The download stopped; Download resumes it where it stopped.' : e instanceof Error ? e.message : String(e));
          throw stopped ? abortError() : e;
        },
      );
      const mine: Download = (d = { done, controller, waiters: 0, kept: false });
      done.catch(() => undefined).finally(() => this.downloads.get(model.id) === mine && this.downloads.delete(model.id));
      this.downloads.set(model.id, d);
    }
    if (!signal) {
      d.kept = true;
      return d.done;
    }
    const mine = d;
    mine.waiters++;
    const leave = () => {
      mine.waiters--;
      if (!mine.kept && mine.waiters === 0) mine.controller.abort(abortError());
    };
    signal.addEventListener('abort', leave, { once: true });
    return untilAborted(mine.done, signal).finally(() => signal.removeEventListener('abort', leave));
  }

  /** Ends the model's download in progress (its received bytes are kept); false when there was none. */
  stopDownload(modelId: string): boolean {
    const d = this.downloads.get(modelId);
    if (!d || d.controller.signal.aborted) return false;
    d.controller.abort(abortError());
    return true;
  }

  /** Lets the lock go once a load that nobody waits for any more has ended. */
  private releaseAfterLoad(release: () => void): void {
    void this.settling.then(release, release);
  }

  /** Loads `model` with at least `window` tokens of context; a smaller window already loaded means a reload. */
  async ensure(model: ModelEntry, window: number, signal?: AbortSignal): Promise<void> {
    const release = await this.lock.acquire(signal);
    try {
      await this.load(model, window, signal);
    } finally {
      this.releaseAfterLoad(release);
    }
  }

  /**
   * Downloads what is missing, then loads. A pause or cancel ends the download
   * (see download) and stops the wait at once; WebLLM 0.2.86 reads the shards
   * from its cache onto the GPU without heeding any signal, so a load already
   * there finishes in the background, holding the lock until it ends.
   */
  private async load(model: ModelEntry, window: number, signal?: AbortSignal): Promise<Mlc> {
    if (this.mlc && this.loaded?.id === model.id && this.loaded.window >= window) return this.mlc;
    await this.download(model, signal);
    if (signal?.aborted) throw abortError();
    await this.reset();
    const progress = (fraction: number, text: string, state: 'working' | 'done' | 'failed' = 'working') =>
      reportModelProgress({ modelId: model.id, phase: 'load', state, fraction, text });
    progress(0, `Loading ${model.label} onto the GPU with a ${window}-token context`);
    const loading = (async () => {
      try {
        const mlc = await this.factory(appConfigFor(model, this.webllm), (r) => progress(r.progress, r.text));
        await mlc.reload(model.id, loadOptions(this.webllm, window, REPETITION_PENALTY));
        this.mlc = mlc;
        // The window WebLLM sized its KV cache for, where it can be read back.
        const loaded = loadedContextWindow(mlc, model.id) ?? window;
        if (loaded < window) {
          throw named(
            'ContextWindowError',
            `WebLLM loaded ${model.label} with a ${loaded}-token context window instead of the ${window} tokens this run needs. Choose a smaller chunk size or memory size.`,
          );
        }
        this.loaded = { id: model.id, window: loaded };
        progress(1, `${model.label} is loaded (${loaded}-token context)`, 'done');
        return mlc;
      } catch (e) {
        const err = explainError(e, model, 'load', window, this.webllm);
        progress(0, err.message, 'failed');
        await this.reset();
        throw err;
      }
    })();
    this.settling = loading.catch(() => undefined);
    return untilAborted(loading, signal);
  }

  /** Frees the GPU; the next request loads again (after a device loss, say). */
  async reset(): Promise<void> {
    const mlc = this.mlc;
    this.mlc = undefined;
    this.loaded = undefined;
    await mlc?.unload().catch(() => undefined);
  }

  async unloadIf(modelId: string): Promise<void> {
    if (this.loaded?.id !== modelId) return;
    const release = await this.lock.acquire();
    try {
      if (this.loaded?.id === modelId) await this.reset();
    } finally {
      release();
    }
  }

  /**
   * One streamed request; Pause or Cancel interrupt it between two decode
   * steps. `system` (see webllmSystemMessage) goes first when given.
   */
  async generate(model: ModelEntry, window: number, messages: readonly ChatMessage[], options: GenerateOptions, system?: string): Promise<GenerateResult> {
    return (await this.stream(model, window, webllmRequest(stepRequest(messages, options, system)), options)).result;
  }

  /**
   * This GPU's speed with `model`: one short request whose reply always runs to
   * `maxTokens`. WebLLM's own prefill and decode speeds where it reports them,
   * else the stream as timed here. It waits its turn like any step, so a read
   * in progress is held up only for its few seconds, and its prompt shares
   * nothing with a step's (WebLLM reuses the KV cache only for a conversation
   * that extends the previous one), so no step's result changes.
   * `countedPrompt` stands in where WebLLM reports no prompt size.
   */
  async calibrate(model: ModelEntry, window: number, messages: readonly ChatMessage[], maxTokens: number, countedPrompt = 0): Promise<SpeedMeasurement> {
    const request = {
      messages: messages.map((m) => ({ role: m.role, content: m.content })),
      max_tokens: maxTokens,
      ignore_eos: true, // a reply that ends early would leave too few tokens to time
      stream: true,
      stream_options: { include_usage: true },
    };
    const { result, timing } = await this.stream(model, window, request, {});
    const { completionTokens, prefillTokensPerSecond, decodeTokensPerSecond } = result.usage;
    const promptTokens = result.usage.promptTokens || countedPrompt;
    if (prefillTokensPerSecond && decodeTokensPerSecond && prefillTokensPerSecond > 0 && decodeTokensPerSecond > 0) {
      return { prefillTokensPerSecond, decodeTokensPerSecond, promptTokens, completionTokens, source: 'reported' };
    }
    // Timed here: the prompt is read before the first token; each later token is one decode step.
    const written = completionTokens || timing.pieces;
    const first = timing.firstTokenAt;
    if (first === undefined || !promptTokens || written < 2 || first <= timing.sentAt || timing.endedAt <= first) {
      throw new Error('The calibration request returned too little to time.');
    }
    return {
      prefillTokensPerSecond: promptTokens / ((first - timing.sentAt) / 1000),
      decodeTokensPerSecond: (written - 1) / ((timing.endedAt - first) / 1000),
      promptTokens,
      completionTokens: written,
      source: 'timed',
    };
  }

  /** Sends one streamed request under the lock, loading the model first if needed; times it as it streams. */
  private async stream(
    model: ModelEntry,
    window: number,
    request: Record<string, unknown>,
    options: Pick<GenerateOptions, 'signal' | 'onToken'>,
  ): Promise<{ result: GenerateResult; timing: StreamTiming }> {
    const { signal } = options;
    const release = await this.lock.acquire(signal);
    let mlc: Mlc;
    try {
      mlc = await this.load(model, window, signal);
    } catch (e) {
      this.releaseAfterLoad(release);
      throw e;
    }
    const loadedWindow = this.loaded?.window ?? window;
    const interrupt = () => void mlc.interruptGenerate();
    signal?.addEventListener('abort', interrupt, { once: true });
    try {
      if (signal?.aborted) throw abortError();
      let text = '';
      let finish: FinishReason = 'stop';
      let usage: StreamChunk['usage'];
      const timing: StreamTiming = { sentAt: performance.now(), endedAt: 0, pieces: 0 };
      for await (const chunk of await mlc.chat.completions.create(request)) {
        const choice = chunk.choices[0];
        const delta = choice?.delta?.content;
        if (delta) {
          timing.firstTokenAt ??= performance.now();
          timing.pieces++;
          text += delta;
          options.onToken?.(delta);
        }
        if (choice?.finish_reason) finish = choice.finish_reason === 'length' ? 'length' : choice.finish_reason === 'abort' ? 'abort' : 'stop';
        if (chunk.usage) usage = chunk.usage;
      }
      timing.endedAt = performance.now();
      if (signal?.aborted) finish = 'abort';
      const result: GenerateResult = {
        text,
        finishReason: finish,
        usage: { promptTokens: usage?.prompt_tokens ?? 0, completionTokens: usage ? writtenTokens(this.webllm, usage) : 0 },
      };
      const extra = usage?.extra;
      if (extra?.prefill_tokens_per_s !== undefined) result.usage.prefillTokensPerSecond = extra.prefill_tokens_per_s;
      if (extra?.decode_tokens_per_s !== undefined) result.usage.decodeTokensPerSecond = extra.decode_tokens_per_s;
      if (extra?.time_to_first_token_s !== undefined) result.usage.timeToFirstTokenSeconds = extra.time_to_first_token_s;
      return { result, timing };
    } catch (e) {
      if (signal?.aborted) throw abortError();
      const err = explainError(e, model, 'generate', loadedWindow, this.webllm);
      if (err.name === 'DeviceLostError') await this.reset(); // what is on the GPU is gone
      throw err;
    } finally {
      signal?.removeEventListener('abort', interrupt);
      release();
    }
  }
}

/** When a request was sent, when its first text came and when it ended (ms), and how many text pieces streamed. */
interface StreamTiming {
  sentAt: number;
  firstTokenAt?: number;
  endedAt: number;
  pieces: number;
}

/**
 * About a thousand prompt tokens, which with the chat template still fit one of
 * WebLLM's 1,024-token prefill passes, and a few dozen written: a few seconds on
 * a laptop GPU.
 */
export const CALIBRATION_PROMPT_TOKENS = 960;
export const CALIBRATION_REPLY_TOKENS = 48;

/** A plain prompt of about `tokens` tokens that asks for a long reply. */
export function calibrationMessages(tokenizer: Tokenizer, tokens = CALIBRATION_PROMPT_TOKENS): ChatMessage[] {
  const head = 'Here are some notes about the weather in a small town. Summarise them in a few sentences.\n\n';
  const line = (i: number) => `Day ${i}: the grass is green, the sky is blue, the sun is yellow, and the wind comes from the west.\n`;
  let content = head;
  // Lines end in a newline, so their counts add up to the whole one's (near enough).
  for (let i = 1, n = tokenizer.count(head); n < tokens; i++) {
    content += line(i);
    n += tokenizer.count(line(i));
  }
  return [{ role: 'user', content }];
}

/** The session every WebLLM engine of this worker shares. */
export const session = new GpuSession();

function roundUp(n: number, step: number): number {
  return Math.ceil(n / step) * step;
}

/**
 * A Qwen2.5 model on WebGPU, run by WebLLM's MLCEngine in this worker. The
 * context window is planned per run (`prepare`) rather than taken from
 * WebLLM's 4096 default.
 */
export class WebLLMEngine implements Engine {
  readonly id = 'webllm';
  /** What the budget planner may fill: the model's limit less the chat template around the prompt. */
  readonly contextWindow: number;
  private planned = 0;
  private shrink = false;

  constructor(
    readonly tokenizer: Tokenizer,
    readonly model: ModelEntry,
    /** The model's own context limit. */
    readonly limit: number,
    /** Tokens the chat template adds around the user message (counted generously), the system message included. */
    readonly overhead: number,
    private readonly gpu: GpuSession = session,
    /** The system message every step sends (see webllmSystemMessage); undefined leaves WebLLM's own. */
    readonly systemMessage?: string,
  ) {
    this.contextWindow = limit - overhead;
  }

  /**
   * The window for a request of `tokens` (prompt and reply): at least 8192,
   * in steps of 1024 so that nearby plans share a load. After repeated device
   * losses, only what the run needs, rounded to 256.
   */
  windowFor(tokens: number): number {
    const need = tokens + this.overhead;
    return Math.min(this.limit, this.shrink ? roundUp(need, 256) : Math.max(MIN_WINDOW, roundUp(need, 1024)));
  }

  /** Loads the model before a run with the window its budget plan needs. */
  async prepare(contextTokens: number, signal?: AbortSignal): Promise<void> {
    this.planned = this.windowFor(contextTokens);
    await this.gpu.ensure(this.model, this.planned, signal);
  }

  /** After a device loss: frees the GPU; from the second loss in a row, loads with a smaller window. */
  async recover(attempt: number): Promise<void> {
    this.shrink = attempt >= 2;
    this.planned = 0;
    await this.gpu.reset();
  }

  async generate(messages: readonly ChatMessage[], options: GenerateOptions): Promise<GenerateResult> {
    if (options.signal?.aborted) throw abortError();
    const prompt = messages.reduce((n, m) => n + this.tokenizer.count(m.content), 0);
    if (prompt + options.maxTokens + this.overhead > this.limit) {
      throw named(
        'ContextWindowSizeExceededError',
        `This step needs ${prompt + options.maxTokens + this.overhead} tokens (prompt, reply and chat template), more than ${this.model.label}'s limit of ${this.limit}. Choose a smaller chunk size or memory size.`,
      );
    }
    const window = Math.max(this.planned, this.windowFor(prompt + options.maxTokens));
    const result = await this.gpu.generate(this.model, window, messages, options, this.systemMessage);
    if (!result.usage.promptTokens) result.usage.promptTokens = prompt;
    if (!result.usage.completionTokens && result.text) result.usage.completionTokens = this.tokenizer.count(result.text);
    return result;
  }

  /** Measures this model's reading and writing speed on this GPU, in the window already loaded where it is large enough. */
  async calibrate(): Promise<SpeedMeasurement> {
    const messages = calibrationMessages(this.tokenizer);
    const prompt = this.tokenizer.count(messages[0]!.content);
    const window = Math.max(this.planned, this.windowFor(prompt + CALIBRATION_REPLY_TOKENS));
    // WebLLM's count includes the chat template; where it gives none, ours of the message stands in.
    return this.gpu.calibrate(this.model, window, messages, CALIBRATION_REPLY_TOKENS, prompt);
  }
}

/**
 * Tokens the conversation template adds around one user message, counted as
 * plain text: never fewer than the model's own. `system` is the system message
 * the requests send, in place of the template's own.
 */
export function chatOverhead(config: ChatConfigLike, tokenizer: Tokenizer, system?: string): number {
  const t = (config.conv_template ?? {}) as Partial<{
    system_template: string;
    system_message: string;
    roles: Record<string, string>;
    seps: string[];
    role_content_sep: string;
    role_empty_sep: string;
  }>;
  const text =
    (t.system_template ?? '').replace('{system_message}', system ?? t.system_message ?? '') +
    (t.roles?.user ?? '') +
    (t.role_content_sep ?? '') +
    (t.seps?.join('') ?? '') +
    (t.roles?.assistant ?? '') +
    (t.role_empty_sep ?? '');
  return Math.max(32, tokenizer.count(text) + 8);
}

export interface WebLLMDeps {
  checkGpu(): Promise<GpuCapability>;
  models(): Promise<ModelEntry[]>;
  /** mlc-chat-config.json and tokenizer.json, from WebLLM's cache or fetched into it. */
  metadata(model: ModelEntry): Promise<{ config: ChatConfigLike; tokenizer: ArrayBuffer }>;
  loadTokenizer(bytes: ArrayBuffer, name: string): Promise<Tokenizer>;
  session: GpuSession;
  /** The model's tokenizer_config.json (its own chat template), if it ships one; the system message is read from it. */
  tokenizerConfig?(model: ModelEntry): Promise<TokenizerConfigLike | undefined>;
}

const defaultDeps: WebLLMDeps = {
  checkGpu: () => checkWebGPU(),
  models: prebuiltModels,
  metadata: (model) => ensureConfigAndTokenizer(model),
  loadTokenizer: loadModelTokenizer,
  session,
  tokenizerConfig: (model) => fetchTokenizerConfig(model.modelUrl),
};

/** The model a config names, as it will run on this GPU, with its config and tokenizer read (downloaded if needed). */
export async function resolveModel(config: EngineConfig | undefined, deps: WebLLMDeps = defaultDeps) {
  // Nothing is downloaded where the model could not run.
  const gpu = await deps.checkGpu();
  if (gpu.status !== 'ok') throw named('WebGPUUnavailableError', gpu.message ?? 'WebGPU is not available.');
  const entries = await deps.models();
  const asked = entryFromConfig(config, entries);
  let model = chooseModel(asked.id, entries, gpu).entry ?? asked;
  const { config: chat, tokenizer } = await deps.metadata(model);
  if (model.needsF16 === undefined) model = { ...model, needsF16: /f16/.test(chat.quantization ?? model.id) };
  if (model.needsF16 && !gpu.shaderF16) {
    throw named(
      'ShaderF16SupportError',
      `${model.label} needs the shader-f16 GPU feature, which this GPU lacks. Use a q4f32_1 conversion of the model instead.`,
    );
  }
  const own = chat.context_window_size && chat.context_window_size > 0 ? chat.context_window_size : QWEN_CONTEXT_LIMIT;
  const limit = model.custom ? (model.contextLimit ?? own) : own;
  return { model, chat, tokenizerBytes: tokenizer, limit };
}

const tokenizers = new Map<string, Promise<Tokenizer>>();

function tokenizerOf(model: ModelEntry, bytes: ArrayBuffer, deps: WebLLMDeps): Promise<Tokenizer> {
  const key = model.modelUrl;
  let t = tokenizers.get(key);
  if (!t) {
    t = deps.loadTokenizer(bytes, model.id);
    t.catch(() => tokenizers.delete(key));
    tokenizers.set(key, t);
  }
  return t;
}

export async function createWebLLMEngine(config?: EngineConfig, deps: WebLLMDeps = defaultDeps): Promise<WebLLMEngine> {
  const { model, chat, tokenizerBytes, limit } = await resolveModel(config, deps);
  const [tokenizer, tokenizerConfig] = await Promise.all([tokenizerOf(model, tokenizerBytes, deps), deps.tokenizerConfig?.(model).catch(() => undefined)]);
  const system = webllmSystemMessage(tokenizerConfig, model);
  return new WebLLMEngine(tokenizer, model, limit, chatOverhead(chat, tokenizer, system), deps.session, system);
}

/** The tokenizer runs on this engine are chunked with: the model's own tokenizer.json. */
export async function webllmTokenizer(config?: EngineConfig, deps: WebLLMDeps = defaultDeps): Promise<Tokenizer> {
  const { model, tokenizerBytes } = await resolveModel(config, deps);
  return tokenizerOf(model, tokenizerBytes, deps);
}
