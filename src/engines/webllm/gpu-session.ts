import { ContextWindowShortError, DeviceLostError } from '../errors';
import { untilAborted } from '../../core/abort';
import { abortError, type ChatMessage, type GenerateOptions, type GenerateResult } from '../../core/generation';
import type { SpeedMeasurement } from '../../core/estimate';
import { Turns } from '../../core/turns';
import { speedOfStream, type StreamTiming } from './check/calibration';
import { Downloads } from './models/downloads';
import { downloadModel } from './models/model-download';
import { type Mlc, type MlcFactory, webllmFactory } from './driver/mlc';
import { stepRequest, webllmRequest, webllmSampling } from '../request';
import type { CompletionRequest } from '../../core/infmem/thinking';
import { explainError } from './explain-error';
import { appConfigFor, type ModelEntry, reportModelProgress } from './models/models';
import { replyRandom } from '../../core/random';
import { type SpeculationPlan, SpeculativeDecoder } from './driver/speculate';
import {
  canVerifyPipeline,
  type DecodeHook,
  replyLength,
  replyTokens,
  type VerifyPipeline,
  webllmSampler,
  withAppSampler,
  withDecodeHook,
} from './driver/driver';
import { SELF_CHECK_MESSAGES, SELF_CHECK_TOKENS, selfCheck, type SelfCheckOutcome } from './check/self-check';
import { GREEDY_TEMPERATURE, type Sampling } from '../../core/speculative';
import { batchBlocker, type BatchPipeline } from './driver/driver-batch';
import { batchOnPipeline, type SessionBatch } from './driver/session-batch';
import type { SessionRequest } from './driver/session-request';
import { readStream, resultOf } from './session-stream';
import { loadedContextWindow, loadedPipeline, loadOptions, SHIPPED_WEBLLM, type WebLLMVersion } from './versions';

export type { SessionRequest } from './driver/session-request';

/** The self-check's request: how it is sent, and the read's sampling it compares WebLLM's with. */
export interface SpeculationCheck {
  system?: string;
  signal?: AbortSignal;
  sampling?: Sampling;
  /** Tokens of the greedy continuation (SELF_CHECK_TOKENS; fewer where every forward takes seconds, on a software GPU). */
  tokens?: number;
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
  /** The token ids of the last reply the loaded model wrote (any request, the self-check's included): measurements compare other ways of writing with it. */
  lastTokens: readonly number[] = [];

  constructor(
    private readonly factory: MlcFactory = webllmFactory,
    private readonly fetchFiles: typeof downloadModel = downloadModel,
    /** The WebLLM version `factory` makes engines of: what the files are named and the loads and requests carry. */
    readonly webllm: WebLLMVersion = SHIPPED_WEBLLM,
    /** Tokens of the self-check's greedy continuation: fewer where a forward takes seconds (a software GPU). */
    private readonly selfCheckTokens: number = SELF_CHECK_TOKENS,
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
    await this.holding({ model, window, signal }, async () => undefined);
  }

  /**
   * Runs `work` on the loaded model with the lock held from before the load
   * to after `work`, however either ends. A load that fails or is left keeps
   * the lock until WebLLM has finished with it (see load).
   */
  private async holding<T>(at: { model: ModelEntry; window: number; signal?: AbortSignal }, work: (mlc: Mlc) => Promise<T>): Promise<T> {
    const release = await this.lock.take(at.signal);
    let loaded = false;
    try {
      const mlc = await this.load(at.model, at.window, at.signal);
      loaded = true;
      return await work(mlc);
    } finally {
      if (loaded) release();
      else this.releaseAfterLoad(release);
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
    return this.holding({ model, window }, (mlc) => work(this.pipelineOf(mlc, model)));
  }

  private pipelineOf(mlc: Mlc, model: ModelEntry): VerifyPipeline {
    const pipeline = loadedPipeline(mlc, model.id) as VerifyPipeline | undefined;
    if (!pipeline) throw new Error(`WebLLM ${this.webllm.version} keeps no chat pipeline for ${model.label}.`);
    return pipeline;
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
    return this.holding({ model, window, signal: request.options.signal }, (mlc) => this.send(mlc, model, request));
  }

  /** A raw completion on the model: the prompt continued as it is (a method that renders its own chat text, InfMem). */
  async complete(model: ModelEntry, window: number, request: CompletionRequest): Promise<GenerateResult> {
    const body = {
      prompt: request.prompt,
      ...webllmSampling({ maxTokens: request.maxTokens, temperature: request.temperature, topP: request.topP }),
    };
    const signal = request.signal ? { signal: request.signal } : {};
    return this.holding({ model, window, ...signal }, async (mlc) => (await this.stream(mlc, model, body, { ...signal, endpoint: 'text' })).result);
  }

  /**
   * Several requests written together, one sequence each in one batch (see
   * session-batch.ts), under the lock: each settled on its own, with its token
   * ids. A lost device fails every request still writing and frees the GPU, as
   * `write` does.
   */
  async writeBatch(model: ModelEntry, window: number, requests: readonly SessionRequest[]): Promise<SessionBatch> {
    return this.holding({ model, window }, async (mlc) => {
      const batch = await batchOnPipeline({
        mlc,
        model,
        pipeline: this.pipelineOf(mlc, model) as BatchPipeline,
        requests,
        context: { phase: 'generate', window: this.loaded?.window ?? window, webllm: this.webllm },
        send: (request) => this.send(mlc, model, request),
      });
      if (batch.lost) await this.reset(); // what is on the GPU is gone
      return batch;
    });
  }

  /** Why the loaded `model` cannot write a batch; undefined where it can or is not loaded (then it is not yet known). */
  batchBlocker(model: ModelEntry): string | undefined {
    if (!this.mlc || this.loaded?.id !== model.id) return undefined;
    const pipeline = loadedPipeline(this.mlc, model.id) as VerifyPipeline | undefined;
    return pipeline ? batchBlocker(pipeline) : undefined;
  }

  /**
   * Whether speculative writing gives `model` on this GPU what WebLLM's own
   * decoding gives (see selfCheck), with the lock held throughout, so that no
   * other model loads between its parts. `unsupported` where the model
   * library cannot verify drafts.
   */
  async checkSpeculation(model: ModelEntry, window: number, check: SpeculationCheck = {}): Promise<SelfCheckOutcome | 'unsupported'> {
    const { system, signal, sampling = READ_SAMPLING, tokens: length = this.selfCheckTokens } = check;
    return this.holding({ model, window, signal }, async (mlc) => {
      const pipeline = loadedPipeline(mlc, model.id) as VerifyPipeline | undefined;
      if (!pipeline || !canVerifyPipeline(pipeline)) return 'unsupported';
      const write = async (plan?: SpeculationPlan) => {
        const options: GenerateOptions = { maxTokens: length, temperature: 0, ...(signal && { signal }) };
        const { tokens } = await this.send(mlc, model, { messages: SELF_CHECK_MESSAGES, options, system, speculation: plan });
        if (signal?.aborted) throw abortError(); // a stopped reply proves nothing
        return tokens;
      };
      const sampler = webllmSampler(pipeline);
      try {
        return await selfCheck({ write, sampling, ...(sampler && { sampler }) });
      } catch (e) {
        if (signal?.aborted) throw abortError();
        if (e instanceof DeviceLostError) throw e;
        // Speculation that fails on this runtime or GPU must never fail a read: it stays off, as after a mismatch.
        console.warn(`Speculative writing failed its check with ${model.label}, so it stays off:`, e);
        return { verdict: 'mismatch' as const, compared: `the check failed: ${e instanceof Error ? e.message : String(e)}` };
      }
    });
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
    const { result, timing } = await this.holding({ model, window }, (mlc) => this.stream(mlc, model, request, {}));
    return speedOfStream(result, timing, countedPrompt);
  }

  /**
   * One step's request on the loaded model, the lock held: with its plan's
   * decoder in place of WebLLM's decode step where it has one. A seeded
   * request that samples draws its tokens as its sequence in a batch would
   * (withAppSampler, one number per reply position): the same seed, the same
   * reply, alone or batched, drafted or not.
   */
  private async send(mlc: Mlc, model: ModelEntry, request: SessionRequest): Promise<{ result: GenerateResult; tokens: number[] }> {
    const { messages, options, system, speculation } = request;
    const body = webllmRequest(stepRequest(messages, options, system));
    const seeded = options.seed !== undefined && !(options.temperature !== undefined && options.temperature < GREEDY_TEMPERATURE);
    if (!speculation && !seeded) return this.stream(mlc, model, body, options);
    const pipeline = loadedPipeline(mlc, model.id) as VerifyPipeline | undefined;
    const seed = options.seed ?? Math.floor(Math.random() * 2 ** 32);
    const random = replyRandom(seed, () => replyLength(pipeline));
    const plain = () => this.stream(mlc, model, body, options);
    // An engine whose pipeline cannot be read (none the app loads) samples with WebLLM's own sampler and the seed.
    const write = () => (seeded && pipeline ? withAppSampler(this.webllm, pipeline, random, plain) : plain());
    if (!speculation) return write();
    // Drafts are looked up in what the model is sent, the system message included.
    const sent = (body.messages ?? []) as { content?: unknown }[];
    const prompt = sent.map((m) => (typeof m.content === 'string' ? m.content : '')).join('\n');
    const decoder = new SpeculativeDecoder(this.webllm, prompt, speculation, random);
    const hook: DecodeHook = (p, genConfig, own) => decoder.decode(p, genConfig, own);
    try {
      const out = await withDecodeHook(mlc, hook, write);
      out.result.usage.writing = { ...decoder.stats };
      return out;
    } finally {
      decoder.end();
    }
  }

  /** Sends one streamed request to the loaded model, the lock held; times it as it streams. */
  private async stream(
    mlc: Mlc,
    model: ModelEntry,
    request: Record<string, unknown>,
    options: Pick<GenerateOptions, 'signal' | 'onToken'> & { endpoint?: 'chat' | 'text' },
  ): Promise<{ result: GenerateResult; timing: StreamTiming; tokens: number[] }> {
    const { signal } = options;
    const loadedWindow = this.loaded?.window;
    const interrupt = () => void mlc.interruptGenerate();
    signal?.addEventListener('abort', interrupt, { once: true });
    try {
      if (signal?.aborted) throw abortError();
      const timing: StreamTiming = { sentAt: performance.now(), endedAt: 0, pieces: 0 };
      const api = options.endpoint === 'text' ? mlc.completions : mlc.chat.completions;
      if (!api) throw new Error('This WebLLM build has no raw completions (engine.completions).');
      const result = await readStream(await api.create(request), timing, options.onToken);
      timing.endedAt = performance.now();
      if (signal?.aborted) result.finishReason = 'abort';
      this.lastTokens = replyTokens(loadedPipeline(mlc, model.id));
      return { result: resultOf(result, this.webllm), timing, tokens: [...this.lastTokens] };
    } catch (e) {
      if (signal?.aborted) throw abortError();
      const err = explainError(e, model, { phase: 'generate', ...(loadedWindow !== undefined && { window: loadedWindow }), webllm: this.webllm });
      if (err instanceof DeviceLostError) await this.reset(); // what is on the GPU is gone
      throw err;
    } finally {
      signal?.removeEventListener('abort', interrupt);
    }
  }
}

/** The paper's sampling, which reads use unless set otherwise: what the self-check compares sampling at by default. */
export const READ_SAMPLING: Sampling = { temperature: 0.7, topP: 0.95 };

/** The session every WebLLM engine of this worker shares. */
export const session = new GpuSession();
