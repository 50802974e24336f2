import { ContextWindowShortError, DeviceLostError } from '../errors';
import { untilAborted } from '../../core/abort';
import { abortError, type ChatMessage, type FinishReason, type GenerateOptions, type GenerateResult } from '../../core/generation';
import type { SpeedMeasurement } from '../../core/estimate';
import { Turns } from '../../core/turns';
import { speedOfStream, type StreamTiming } from './calibration';
import { Downloads } from './downloads';
import { downloadModel } from './model-download';
import { type Mlc, type MlcFactory, type StreamChunk, webllmFactory } from './mlc';
import { stepRequest, webllmRequest } from '../request';
import { explainError } from './explain-error';
import { appConfigFor, type ModelEntry, reportModelProgress } from './models';
import { seededRandom } from '../../core/random';
import { adaptivePlan, batchVerify, type GenConfig, type SpeculationPlan, SpeculativeDecoder, type VerifyPipeline } from './speculate';
import { loadedContextWindow, loadedPipeline, loadOptions, SHIPPED_WEBLLM, verifyBlocker, type WebLLMVersion, writtenTokens } from './versions';

/** One step's request as the session sends it. */
export interface SessionRequest {
  messages: readonly ChatMessage[];
  options: GenerateOptions;
  /** The system message every step sends (see webllmSystemMessage), first where given. */
  system?: string;
  /** Speculative writing's plan; without one WebLLM's own decoding writes the reply. */
  speculation?: SpeculationPlan;
}

/** The self-check's request: the plan checked (a fresh adaptive one by default) and how it is sent. */
export interface SpeculationCheck {
  system?: string;
  plan?: SpeculationPlan;
  signal?: AbortSignal;
}

/** A calibration request: `countedPrompt` stands in where WebLLM reports no prompt size. */
export interface CalibrationRequest {
  messages: readonly ChatMessage[];
  maxTokens: number;
  countedPrompt?: number;
}

/** MemAgent's evaluation served the model with no repetition penalty; Qwen's WebLLM config would apply 1.05. */
export const REPETITION_PENALTY = 1;

/**
 * The one model on the GPU in this worker. Every load and every request goes
 * through its lock, so a reload never cuts into a step being written.
 */
export class GpuSession {
  private mlc: Mlc | undefined;
  private loaded: { id: string; window: number } | undefined;
  /** A paused run leaves the queue at once: it must not wait for another run's step. */
  private readonly lock = new Turns();
  private readonly downloads: Downloads;
  /** A WebLLM load that a stopped run no longer waits for; the lock is held until it ends. */
  private settling: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly factory: MlcFactory = webllmFactory,
    private readonly fetchFiles: typeof downloadModel = downloadModel,
    /** The WebLLM version `factory` makes engines of: what the files are named and the loads and requests carry. */
    readonly webllm: WebLLMVersion = SHIPPED_WEBLLM,
  ) {
    this.downloads = new Downloads(fetchFiles, webllm);
  }

  get current(): { id: string; window: number } | undefined {
    return this.loaded;
  }

  /** Fetches what is missing into WebLLM's caches (see Downloads.download). */
  download(model: ModelEntry, signal?: AbortSignal): Promise<unknown> {
    return this.downloads.download(model, signal);
  }

  /** Ends the model's download in progress (its received bytes are kept); false when there was none. */
  stopDownload(modelId: string): boolean {
    return this.downloads.stopDownload(modelId);
  }

  /** Lets the lock go once a load that nobody waits for any more has ended. */
  private releaseAfterLoad(release: () => void): void {
    void this.settling.then(release, release);
  }

  /** Loads `model` with at least `window` tokens of context; a smaller window already loaded means a reload. */
  async ensure(model: ModelEntry, window: number, signal?: AbortSignal): Promise<void> {
    const release = await this.lock.take(signal);
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
          throw new ContextWindowShortError(
            `WebLLM loaded ${model.label} with a ${loaded}-token context window instead of the ${window} tokens this run needs. Choose a smaller chunk size or memory size.`,
          );
        }
        this.loaded = { id: model.id, window: loaded };
        progress(1, `${model.label} is loaded (${loaded}-token context)`, 'done');
        return mlc;
      } catch (e) {
        const err = explainError(e, model, { phase: 'load', window, webllm: this.webllm });
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
    const release = await this.lock.take();
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
    const release = await this.lock.take();
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
  async generate(model: ModelEntry, window: number, request: SessionRequest): Promise<GenerateResult> {
    return (await this.write(model, window, request)).result;
  }

  /**
   * One request as generate sends it, with the token ids it wrote (the
   * loaded pipeline's own): for comparing plain and speculative writing.
   */
  async write(model: ModelEntry, window: number, request: SessionRequest): Promise<{ result: GenerateResult; tokens: number[] }> {
    const { messages, options, system, speculation } = request;
    const { result, tokens } = await this.stream(model, window, webllmRequest(stepRequest(messages, options, system)), { ...options, speculation });
    return { result, tokens };
  }

  /**
   * Whether speculative writing gives `model` on this GPU exactly the tokens
   * plain decoding does: a short temperature-0 continuation written both
   * ways. `unsupported` where the model library cannot verify drafts.
   */
  async checkSpeculation(model: ModelEntry, window: number, check: SpeculationCheck = {}): Promise<'exact' | 'mismatch' | 'unsupported'> {
    const { system, plan = adaptivePlan(), signal } = check;
    const options: GenerateOptions = { maxTokens: SELF_CHECK_TOKENS, temperature: 0, ...(signal && { signal }) };
    await this.ensure(model, window, signal);
    const pipeline = loadedPipeline(this.mlc, model.id) as VerifyPipeline | undefined;
    if (!pipeline || verifyBlocker(pipeline) || !batchVerify(pipeline)) return 'unsupported';
    const request: SessionRequest = { messages: SELF_CHECK_MESSAGES, options, system };
    const plain = await this.write(model, window, request);
    if (signal?.aborted) throw abortError(); // a stopped reply proves nothing
    let speculative: Awaited<ReturnType<GpuSession['write']>>;
    try {
      speculative = await this.write(model, window, { ...request, speculation: plan });
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
  async calibrate(model: ModelEntry, window: number, calibration: CalibrationRequest): Promise<SpeedMeasurement> {
    const { messages, maxTokens, countedPrompt = 0 } = calibration;
    const request = {
      messages: messages.map((m) => ({ role: m.role, content: m.content })),
      max_tokens: maxTokens,
      ignore_eos: true, // a reply that ends early would leave too few tokens to time
      stream: true,
      stream_options: { include_usage: true },
    };
    const { result, timing } = await this.stream(model, window, request, {});
    return speedOfStream(result, timing, countedPrompt);
  }

  /** Sends one streamed request under the lock, loading the model first if needed; times it as it streams. */
  private async stream(
    model: ModelEntry,
    window: number,
    request: Record<string, unknown>,
    options: Pick<GenerateOptions, 'signal' | 'onToken'> & { speculation?: SpeculationPlan },
  ): Promise<{ result: GenerateResult; timing: StreamTiming; tokens: number[] }> {
    const { signal, speculation } = options;
    const release = await this.lock.take(signal);
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
      const err = explainError(e, model, { phase: 'generate', window: loadedWindow, webllm: this.webllm });
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

/** The session every WebLLM engine of this worker shares. */
export const session = new GpuSession();
