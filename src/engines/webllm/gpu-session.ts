import { DeviceLostError } from '../errors';
import { abortError, type ChatMessage, type FinishReason, type GenerateOptions, type GenerateResult } from '../../core/generation';
import type { SpeedMeasurement } from '../../core/estimate';
import { downloadModel, scopeTuning } from './model-download';
import { stepRequest, webllmRequest } from '../request';
import { explainError, named } from './explain-error';
import { appConfigFor, type ModelEntry, reportModelProgress } from './models';
import { seededRandom } from '../../core/speculative';
import { batchVerify, DEFAULT_PLAN, type GenConfig, type SpeculationPlan, SpeculativeDecoder, type VerifyPipeline } from './speculate';
import {
  loadedContextWindow,
  loadedPipeline,
  loadOptions,
  SHIPPED_WEBLLM,
  verifyBlocker,
  type WebLLMAppConfig,
  type WebLLMVersion,
  writtenTokens,
} from './versions';

/** MemAgent's evaluation served the model with no repetition penalty; Qwen's WebLLM config would apply 1.05. */
export const REPETITION_PENALTY = 1;

/** The slice of WebLLM's MLCEngine used here; unit tests put a stub in its place. */
export interface Mlc {
  reload(modelId: string, chatOpts?: Record<string, unknown>): Promise<void>;
  unload(): Promise<void>;
  interruptGenerate(): unknown;
  chat: { completions: { create(request: Record<string, unknown>): Promise<AsyncIterable<StreamChunk>> } };
  /** MLCEngine's decode step, which a speculative request replaces for its duration. */
  decode?(pipeline: unknown, genConfig: unknown): Promise<unknown>;
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
    // The stopped download's failure was its own caller's; the new one only waits for it to end.
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
      // Its callers see the failure through `done`; this branch only forgets the finished download.
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
    // Its caller sees the failure through `loading`; `settling` only marks when the load has ended.
    this.settling = loading.catch(() => undefined);
    return untilAborted(loading, signal);
  }

  /** Runs `work` on the loaded model's chat pipeline under the lock: the benchmark's direct measurements of a verify pass. */
  async withPipeline<T>(model: ModelEntry, window: number, work: (pipeline: VerifyPipeline) => Promise<T>): Promise<T> {
    const release = await this.lock.acquire();
    let mlc: Mlc;
    try {
      mlc = await this.load(model, window);
    } catch (e) {
      this.releaseAfterLoad(release);
      throw e;
    }
    try {
      const pipeline = loadedPipeline(mlc, model.id) as VerifyPipeline | undefined;
      if (!pipeline) throw new Error(`WebLLM ${this.webllm.version} keeps no chat pipeline for ${model.label}.`);
      return await work(pipeline);
    } finally {
      release();
    }
  }

  /** Frees the GPU; the next request loads again (after a device loss, say). */
  async reset(): Promise<void> {
    const mlc = this.mlc;
    this.mlc = undefined;
    this.loaded = undefined;
    // Best effort: a model that cannot unload (the device lost) is gone from the GPU anyway.
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
  async generate(
    model: ModelEntry,
    window: number,
    messages: readonly ChatMessage[],
    options: GenerateOptions,
    system?: string,
    speculation?: SpeculationPlan,
  ): Promise<GenerateResult> {
    return (await this.write(model, window, messages, options, system, speculation)).result;
  }

  /**
   * One request as generate sends it, with the token ids it wrote (the
   * loaded pipeline's own): for comparing plain and speculative writing.
   */
  async write(
    model: ModelEntry,
    window: number,
    messages: readonly ChatMessage[],
    options: GenerateOptions,
    system?: string,
    speculation?: SpeculationPlan,
  ): Promise<{ result: GenerateResult; tokens: number[] }> {
    const { result, tokens } = await this.stream(model, window, webllmRequest(stepRequest(messages, options, system)), options, speculation);
    return { result, tokens };
  }

  /**
   * Whether speculative writing gives `model` on this GPU exactly the tokens
   * plain decoding does: a short temperature-0 continuation written both
   * ways. `unsupported` where the model library cannot verify drafts.
   */
  async checkSpeculation(
    model: ModelEntry,
    window: number,
    system?: string,
    plan: SpeculationPlan = DEFAULT_PLAN,
    signal?: AbortSignal,
  ): Promise<'exact' | 'mismatch' | 'unsupported'> {
    const options: GenerateOptions = { maxTokens: SELF_CHECK_TOKENS, temperature: 0, ...(signal && { signal }) };
    await this.ensure(model, window, signal);
    const pipeline = loadedPipeline(this.mlc, model.id) as VerifyPipeline | undefined;
    if (!pipeline || verifyBlocker(pipeline) || !batchVerify(pipeline)) return 'unsupported';
    const plain = await this.write(model, window, SELF_CHECK_MESSAGES, options, system);
    if (signal?.aborted) throw abortError(); // a stopped reply proves nothing
    let speculative: Awaited<ReturnType<GpuSession['write']>>;
    try {
      speculative = await this.write(model, window, SELF_CHECK_MESSAGES, options, system, plan);
    } catch (e) {
      if (signal?.aborted) throw abortError();
      if (e instanceof DeviceLostError) throw e;
      // Speculation that fails on this runtime or GPU must never fail a read: it stays off, as after a mismatch.
      console.warn(`Speculative writing failed its check with ${model.label}, so it stays off:`, e);
      return 'mismatch';
    }
    if (signal?.aborted) throw abortError();
    return plain.tokens.length > 0 && plain.tokens.join() === speculative.tokens.join() ? 'exact' : 'mismatch';
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
    speculation?: SpeculationPlan,
  ): Promise<{ result: GenerateResult; timing: StreamTiming; tokens: number[] }> {
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
    const decoder = speculation && this.speculate(mlc, request, speculation);
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
      if (decoder) result.usage.writing = { ...decoder.stats };
      const written = (loadedPipeline(mlc, model.id) as { outputIds?: number[] } | undefined)?.outputIds;
      return { result, timing, tokens: written ? [...written] : [] };
    } catch (e) {
      if (signal?.aborted) throw abortError();
      const err = explainError(e, model, 'generate', loadedWindow, this.webllm);
      if (err.name === 'DeviceLostError') await this.reset(); // what is on the GPU is gone
      throw err;
    } finally {
      decoder?.restore();
      signal?.removeEventListener('abort', interrupt);
      release();
    }
  }

  /** Puts a speculative decoder in place of `mlc`'s decode step for one request; `restore` puts WebLLM's back. */
  private speculate(mlc: Mlc, request: Record<string, unknown>, plan: SpeculationPlan): { stats: SpeculativeDecoder['stats']; restore(): void } {
    const own = mlc.decode?.bind(mlc);
    if (!own) throw new Error(`WebLLM ${this.webllm.version}'s engine has no decode step to replace.`);
    const before = Object.getOwnPropertyDescriptor(mlc, 'decode');
    const messages = (request.messages ?? []) as { content?: unknown }[];
    const prompt = messages.map((m) => (typeof m.content === 'string' ? m.content : '')).join('\n');
    const seed = typeof request.seed === 'number' ? request.seed : Math.floor(Math.random() * 2 ** 32);
    const decoder = new SpeculativeDecoder(this.webllm, prompt, plan, seededRandom(seed));
    mlc.decode = (pipeline, genConfig) => decoder.decode(pipeline as VerifyPipeline, genConfig as GenConfig, () => own(pipeline, genConfig));
    return {
      stats: decoder.stats,
      restore: () => {
        if (before) Object.defineProperty(mlc, 'decode', before);
        else delete mlc.decode;
      },
    };
  }
}

/** A short temperature-0 continuation for the self-check: a repeated list, so that prompt lookup drafts from it. */
export const SELF_CHECK_TOKENS = 6;
export const SELF_CHECK_MESSAGES: readonly ChatMessage[] = [{ role: 'user', content: 'one two three four five one two three four five one two' }];

/** When a request was sent, when its first text came and when it ended (ms), and how many text pieces streamed. */
interface StreamTiming {
  sentAt: number;
  firstTokenAt?: number;
  endedAt: number;
  pieces: number;
}
/** The session every WebLLM engine of this worker shares. */
export const session = new GpuSession();
