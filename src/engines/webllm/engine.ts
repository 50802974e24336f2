import { abortError, type ChatMessage, type GenerateOptions, type GenerateResult } from '../../core/generation';
import type { SpeedMeasurement } from '../../core/estimate';
import type { Tokenizer } from '../../core/tokenizer';
import type { BatchRequest } from '../../core/batch';
import type { RawCompleter } from '../../core/infmem/thinking';
import type { BatchLimit, Engine, EngineConfig } from '../engine';
import { batchLimitFor, type BatchShape, kvShape, type KvConfigLike } from './driver/batch-limit';
import type { BatchSplit } from './driver/batch-writer';
import { ContextWindowExceededError, EngineSettingsError } from '../errors';
import type { GpuCapability } from './check/webgpu';
import type { ChatConfigLike } from './models/model-download';
import { webllmSystemMessage } from './models/system-message';
import { type GpuSession, session } from './gpu-session';
import { calibrationMessages, CALIBRATION_REPLY_TOKENS } from './check/calibration';
import { defaultDeps, resolveModel, tokenizerOf, type WebLLMDeps } from './resolve';
import { memagentProblem, type ModelEntry } from './models/models';
import { modelKey } from '../../core/estimate';
import type { SpeedShelf } from '../speed-shelf';
import { adaptivePlan, type SpeculationPlan } from './driver/speculate';
import { DraftLength } from '../../core/draft-length';
import { type SpeculationSetting, speculationVerdict } from './check/speculation-check';

/** One MemAgent step in training took ~8K tokens; never less, whatever a small chunk would allow. */
export const MIN_WINDOW = 8192;
function roundUp(n: number, step: number): number {
  return Math.ceil(n / step) * step;
}

/** What a WebLLM engine is made of. */
export interface WebLLMEngineParts {
  tokenizer: Tokenizer;
  model: ModelEntry;
  /** The model's own context limit. */
  limit: number;
  /** Tokens the chat template adds around the user message (counted generously), the system message included. */
  overhead: number;
  /** The worker's session by default. */
  gpu?: GpuSession;
  /** The system message every step sends (see webllmSystemMessage); undefined leaves WebLLM's own. */
  systemMessage?: string;
  /** What decides how many questions one batch holds on this device (see batchLimitFor); without it, one. */
  batchShape?: BatchShape;
  /** The adapter's buffer limits, read when a batch size is asked for. */
  adapterLimits?: () => Promise<Pick<BatchShape, 'maxBufferSize' | 'maxStorageBufferBindingSize'>>;
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
  /** Speculative writing for this run's steps, where set and on (see speculationVerdict). */
  speculation: SpeculationSetting | undefined;

  readonly tokenizer: Tokenizer;
  readonly model: ModelEntry;
  readonly limit: number;
  readonly overhead: number;
  readonly systemMessage: string | undefined;
  readonly batchShape: BatchShape | undefined;
  private readonly adapterLimits: WebLLMEngineParts['adapterLimits'];
  /** The most requests a batch's cache could be allocated for here, once one for more (`asked`) could not. */
  private fits: { size: number; asked: number } | undefined;
  private readonly gpu: GpuSession;

  constructor(parts: WebLLMEngineParts) {
    this.tokenizer = parts.tokenizer;
    this.model = parts.model;
    this.limit = parts.limit;
    this.overhead = parts.overhead;
    this.systemMessage = parts.systemMessage;
    this.batchShape = parts.batchShape;
    this.adapterLimits = parts.adapterLimits;
    this.gpu = parts.gpu ?? session;
    this.contextWindow = this.limit - this.overhead;
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
    this.checkMemAgent();
    const prompt = messages.reduce((n, m) => n + this.tokenizer.count(m.content), 0);
    if (prompt + options.maxTokens + this.overhead > this.limit) throw this.overLimit(prompt + options.maxTokens);
    const window = Math.max(this.planned, this.windowFor(prompt + options.maxTokens));
    const plan = await this.speculationPlan(window, options);
    const result = await this.gpu.generate(this.model, window, { messages, options, system: this.systemMessage, speculation: plan });
    if (!result.usage.promptTokens) result.usage.promptTokens = prompt;
    if (!result.usage.completionTokens && result.text) result.usage.completionTokens = this.tokenizer.count(result.text);
    return result;
  }

  /** Chat requests are MemAgent's steps, which a Qwen3 model does not take (see memagentProblem); raw completions are InfMem's. */
  private checkMemAgent(): void {
    const problem = memagentProblem(this.model);
    if (problem) throw new EngineSettingsError(problem);
  }

  /** Raw completions: a prompt the caller rendered (InfMem's chat text) continued as it is, on the same loaded model. */
  readonly completer: RawCompleter = {
    complete: async (request) => {
      if (request.signal?.aborted) throw abortError();
      const prompt = this.tokenizer.count(request.prompt);
      // The prompt carries its own chat template: no overhead to add.
      if (prompt + request.maxTokens > this.limit) throw this.overLimit(prompt + request.maxTokens);
      const window = Math.max(this.planned, this.windowFor(prompt + request.maxTokens));
      const { text, usage } = await this.gpu.complete(this.model, window, request);
      return { text, promptTokens: usage.promptTokens || prompt, completionTokens: usage.completionTokens || this.tokenizer.count(text) };
    },
  };

  /**
   * Several questions' requests of one step written together, one sequence
   * each in one batch (see GpuSession.writeBatch): each settled on its own.
   * A request over the model's limit, or already stopped, fails alone; a load
   * that fails fails them all.
   */
  async generateBatch(requests: readonly BatchRequest[]): Promise<PromiseSettledResult<GenerateResult>[]> {
    this.checkMemAgent();
    const out: PromiseSettledResult<GenerateResult>[] = new Array(requests.length);
    const prompts = requests.map((r) => r.messages.reduce((n, m) => n + this.tokenizer.count(m.content), 0));
    const sent: number[] = [];
    let window = this.planned;
    requests.forEach((r, i) => {
      const need = prompts[i]! + r.options.maxTokens;
      if (r.options.signal?.aborted) out[i] = { status: 'rejected', reason: abortError() };
      else if (need + this.overhead > this.limit) out[i] = { status: 'rejected', reason: this.overLimit(need) };
      else {
        sent.push(i);
        window = Math.max(window, this.windowFor(need));
      }
    });
    if (!sent.length) return out;
    try {
      const session = await Promise.all(
        sent.map(async (i) => {
          const { messages, options } = requests[i]!;
          return { messages, options, system: this.systemMessage, speculation: await this.speculationPlan(window, options) };
        }),
      );
      // Once a cache for more could not be allocated here, the requests go in groups of a size that could.
      const most = this.fits?.size ?? Infinity;
      for (let at = 0; at < sent.length; at += most) {
        const batch = await this.gpu.writeBatch(this.model, window, session.slice(at, at + most));
        if (batch.split) this.cacheSplit(batch.split);
        sent.slice(at, at + most).forEach((i, k) => {
          const r = batch.results[k]!;
          if (r.status === 'fulfilled') {
            if (!r.value.usage.promptTokens) r.value.usage.promptTokens = prompts[i]!;
            if (!r.value.usage.completionTokens && r.value.text) r.value.usage.completionTokens = this.tokenizer.count(r.value.text);
          }
          out[i] = r;
        });
      }
    } catch (reason) {
      for (const i of sent) out[i] ??= { status: 'rejected', reason: requests[i]!.options.signal?.aborted ? abortError() : reason };
    }
    return out;
  }

  /** A batch whose cache could not be allocated was written in smaller groups: later batches are that size, and the console and batchLimit say so. */
  private cacheSplit(split: BatchSplit): void {
    if (this.fits && this.fits.size <= split.size) return;
    this.fits = { size: split.size, asked: Math.max(split.asked, this.fits?.asked ?? 0) };
    console.warn(`${this.fitsReason(this.fits)} The allocation failed with:`, split.error);
  }

  private fitsReason(fits: { size: number; asked: number }): string {
    return `A KV cache for ${fits.asked} questions could not be allocated on this GPU, so at most ${fits.size} are written in one batch.`;
  }

  /** How many requests of `contextTokens` one batch holds on this GPU (see batchLimitFor). */
  async batchLimit(contextTokens: number): Promise<BatchLimit> {
    const blocker = this.gpu.batchBlocker(this.model);
    if (!this.batchShape) return { size: 1, reason: `Questions are written in turns: ${blocker ?? 'the model config gives no KV cache size'}.` };
    const limits = (await this.adapterLimits?.()) ?? {};
    // WebLLM's own cache of the window a read of this context loads stays beside the batch's.
    const ownCacheTokens = Math.max(this.planned, this.windowFor(contextTokens));
    const limit = batchLimitFor({ ...this.batchShape, ...limits, ownCacheTokens, ...(blocker && { blocker }) }, contextTokens + this.overhead);
    return this.fits && this.fits.size < limit.size ? { size: this.fits.size, reason: this.fitsReason(this.fits) } : limit;
  }

  private overLimit(need: number): ContextWindowExceededError {
    return new ContextWindowExceededError(
      `This step needs ${need + this.overhead} tokens (prompt, reply and chat template), more than ${this.model.label}'s limit of ${this.limit}. Choose a smaller chunk size or memory size.`,
    );
  }

  /**
   * The plan a step is written with: none where the setting is off, the
   * library cannot verify drafts, or the self-check found a mismatch. K is
   * chosen by the run's tuner (its requests' options carry it); a request
   * with none gets one of its own.
   */
  async speculationPlan(
    window: number,
    options: Pick<GenerateOptions, 'signal' | 'temperature' | 'topP' | 'draftTuner'>,
  ): Promise<SpeculationPlan | undefined> {
    if (!this.speculation?.on) return undefined;
    const sampling = options.temperature !== undefined ? { temperature: options.temperature, topP: options.topP ?? 1 } : undefined;
    const verdict = await speculationVerdict(this.gpu, this.model, this.speculation, {
      window,
      system: this.systemMessage,
      ...(options.signal && { signal: options.signal }),
      ...(sampling && sampling.temperature > 0 && { sampling }),
    });
    return verdict?.verdict === 'exact' ? adaptivePlan(options.draftTuner ?? new DraftLength()) : undefined;
  }

  /** Measures this model's reading and writing speed on this GPU, in the window already loaded where it is large enough. */
  async calibrate(): Promise<SpeedMeasurement> {
    const messages = calibrationMessages(this.tokenizer);
    const prompt = this.tokenizer.count(messages[0]!.content);
    const window = Math.max(this.planned, this.windowFor(prompt + CALIBRATION_REPLY_TOKENS));
    // WebLLM's count includes the chat template; where it gives none, ours of the message stands in.
    return this.gpu.calibrate(this.model, window, { messages, maxTokens: CALIBRATION_REPLY_TOKENS, countedPrompt: prompt });
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

/**
 * The engine a run's config names. Speculative writing is on unless the
 * config's `speculate` is false; its self-check's verdict is kept on `speeds`
 * where given.
 */
export async function createWebLLMEngine(config?: EngineConfig, deps: WebLLMDeps = defaultDeps, speeds?: SpeedShelf): Promise<WebLLMEngine> {
  const { model, chat, tokenizerBytes, limit, adapter } = await resolveModel(config, deps);
  // The tokenizer config only refines the system message: one that cannot be read leaves the model's default.
  const [tokenizer, tokenizerConfig] = await Promise.all([tokenizerOf(model, tokenizerBytes, deps), deps.tokenizerConfig?.(model).catch(() => undefined)]);
  const system = webllmSystemMessage(tokenizerConfig, model);
  const kv = kvShape((chat as { model_config?: KvConfigLike }).model_config, chat.quantization ?? model.id);
  const engine = new WebLLMEngine({
    tokenizer,
    model,
    limit,
    overhead: chatOverhead(chat, tokenizer, system),
    gpu: deps.session,
    systemMessage: system,
    ...(kv && { batchShape: { ...kv, ...(model.vramMB && { weightsBytes: model.vramMB * 1024 ** 2 }) } }),
    adapterLimits: async () => {
      // A check that cannot be repeated leaves the buffer limits unknown.
      const gpu = await deps.checkGpu().catch(() => undefined);
      return gpu ? bufferLimits(gpu) : {};
    },
  });
  engine.speculation = { on: config?.speculate !== false, modelKey: modelKey(config), adapter, ...(speeds && { shelf: speeds }) };
  return engine;
}

/** The adapter's buffer limits a batch's cache must fit, from the WebGPU check (the browser's or Dawn's): those it gave. */
export function bufferLimits(
  gpu: Pick<GpuCapability, 'maxBufferSize' | 'maxStorageBufferBindingSize'>,
): Pick<BatchShape, 'maxBufferSize' | 'maxStorageBufferBindingSize'> {
  const { maxBufferSize, maxStorageBufferBindingSize } = gpu;
  return { ...(maxBufferSize && { maxBufferSize }), ...(maxStorageBufferBindingSize && { maxStorageBufferBindingSize }) };
}
