/**
 * Where a request's time goes inside WebLLM, measured without changing the
 * app's engine: the MLCEngine the app's GPU session makes is wrapped as it is
 * made. Its chat pipeline's prefill and decode steps are timed one by one
 * (the same methods in 0.2.79 and 0.2.86), 0.2.86 is asked for its own
 * latency breakdown, one decode token's and one prefill chunk's kernels are
 * timed on the GPU where the adapter can (kernel-clock.ts), and a sampler
 * that meets NaN logits is reported as such.
 */
import type { Mlc, MlcFactory, StreamChunk } from '../../src/engines/webllm/driver/mlc';
import { WEBLLM_0_2_86, type WebLLMVersion } from '../../src/engines/webllm/versions';
import type { GpuKernelTimes, KernelClock } from './kernel-clock';

/** Decode steps averaged for "at the start" and "at the end" of a reply. */
const EDGE = 8;

export class NaNLogitsError extends Error {
  override name = 'NaNLogitsError';
}

/** WebLLM 0.2.86's per-token latency breakdown, summed and per token, in ms. */
export interface LatencyBreakdown {
  offered: true;
  tokens: number;
  msPerToken: Record<string, number>;
  msInAll: Record<string, number>;
}

export interface RequestTimes {
  /** The prefill step: the prompt read and the first token sampled and read back. */
  firstTokenMs: number;
  decodeSteps: number;
  /** Mean decode step over the first and the last few (up to 8, at most half the steps each). */
  decodeStartMs?: number;
  decodeEndMs?: number;
  decodeMeanMs?: number;
  breakdown: LatencyBreakdown | { offered: false; note: string };
  gpu?: GpuKernelTimes;
}

interface Pending {
  prefillMs: number;
  decode: number[];
  usage?: StreamChunk['usage'];
  prefillCaptured: boolean;
}

type Fn = (...args: unknown[]) => Promise<unknown>;

function isNaNMessage(e: unknown): boolean {
  return e instanceof Error && /\bnan\b/i.test(e.message);
}

const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const r3 = (n: number) => Number(n.toFixed(3));

export class RuntimeProbe {
  private pending: Pending | undefined;

  constructor(
    readonly version: WebLLMVersion,
    private readonly clock?: KernelClock,
  ) {}

  /** The session's factory, its engines watched. */
  factory(inner: MlcFactory): MlcFactory {
    return async (appConfig, onProgress) => {
      const mlc = await inner(appConfig, onProgress);
      const reload = mlc.reload.bind(mlc);
      mlc.reload = async (modelId, chatOpts) => {
        await reload(modelId, chatOpts);
        const pipelines = (mlc as unknown as { loadedModelIdToPipeline?: Map<string, Record<string, unknown>> }).loadedModelIdToPipeline;
        const pipeline = pipelines?.get(modelId);
        if (pipeline) this.instrument(pipeline);
      };
      const completions = mlc.chat.completions;
      const create = completions.create.bind(completions);
      const breakdown = this.version === WEBLLM_0_2_86;
      completions.create = async (request) => {
        const extra = (request.extra_body ?? {}) as Record<string, unknown>;
        const stream = await create(breakdown ? { ...request, extra_body: { ...extra, enable_latency_breakdown: true } } : request);
        return this.watch(stream);
      };
      return mlc as Mlc;
    };
  }

  private async *watch(stream: AsyncIterable<StreamChunk>): AsyncGenerator<StreamChunk> {
    for await (const chunk of stream) {
      if (chunk.usage && this.pending) this.pending.usage = chunk.usage;
      yield chunk;
    }
  }

  /** Wraps the pipeline's steps on the instance: both versions call them as its methods. */
  instrument(pipeline: Record<string, unknown>): void {
    const wrap = (name: string, around: (original: Fn) => Fn) => {
      const original = pipeline[name];
      if (typeof original === 'function') pipeline[name] = around((original as Fn).bind(pipeline));
    };
    wrap('prefillStep', (original) => async (...args) => {
      const t0 = performance.now();
      try {
        return await original(...args);
      } finally {
        if (this.pending) this.pending.prefillMs += performance.now() - t0;
      }
    });
    wrap('decodeStep', (original) => async (...args) => {
      const t0 = performance.now();
      const result = await original(...args);
      const ms = performance.now() - t0;
      this.pending?.decode.push(ms);
      if (this.clock?.has('decode')) this.clock.noteWall('decode', ms);
      return result;
    });
    // One forward pass: a prefill chunk (more than one token) or a decode token. The first chunk of a
    // request and its last decode token are the ones timed on the GPU.
    wrap('embedAndForward', (original) => async (input, length) => {
      const tokens = Number(length);
      const kind = tokens > 1 ? 'prefill' : 'decode';
      const context = Number(pipeline.filledKVCacheLength ?? 0);
      const pending = this.pending;
      const wanted = this.clock && pending && (kind === 'decode' || !pending.prefillCaptured);
      const armed = wanted ? this.clock!.arm(kind, tokens, context) : false;
      if (armed && kind === 'prefill') pending!.prefillCaptured = true;
      try {
        return await original(input, length);
      } finally {
        if (armed) this.clock!.disarm();
      }
    });
    for (const sampler of ['sampleTokenFromLogits', 'sampleFromRawLogits']) {
      wrap(sampler, (original) => async (...args) => {
        try {
          return await original(...args);
        } catch (e) {
          if (!isNaNMessage(e)) throw e;
          throw new NaNLogitsError(
            `The model's logits were NaN when WebLLM sampled a token (${(e as Error).message.split('\n')[0]}). The made-up weights keep every activation far inside f16's range, so this is the GPU's arithmetic (its driver or a Dawn toggle), not overflow.`,
          );
        }
      });
    }
  }

  /** Starts watching the next request. */
  begin(): void {
    this.pending = { prefillMs: 0, decode: [], prefillCaptured: false };
  }

  /** What the request since begin() spent where. */
  async end(): Promise<RequestTimes> {
    const p = this.pending;
    this.pending = undefined;
    if (!p) throw new Error('end() without begin().');
    const n = p.decode.length;
    const edge = Math.max(1, Math.min(EDGE, Math.floor(n / 2)));
    const times: RequestTimes = {
      firstTokenMs: r3(p.prefillMs),
      decodeSteps: n,
      breakdown: this.breakdown(p.usage),
    };
    if (n > 0) {
      times.decodeStartMs = r3(mean(p.decode.slice(0, edge)));
      times.decodeEndMs = r3(mean(p.decode.slice(-edge)));
      times.decodeMeanMs = r3(mean(p.decode));
    }
    if (this.clock) times.gpu = await this.clock.collect();
    return times;
  }

  private breakdown(usage: StreamChunk['usage']): RequestTimes['breakdown'] {
    if (this.version !== WEBLLM_0_2_86) return { offered: false, note: `WebLLM ${this.version.version} offers no latency breakdown (0.2.86 does)` };
    const raw = (usage?.extra as { latencyBreakdown?: Record<string, unknown> } | undefined)?.latencyBreakdown;
    if (!raw) return { offered: false, note: 'WebLLM returned no latency breakdown for this request' };
    const msInAll: Record<string, number> = {};
    const msPerToken: Record<string, number> = {};
    let tokens = 0;
    for (const [key, value] of Object.entries(raw)) {
      if (!Array.isArray(value)) continue;
      const seconds = value.filter((v): v is number => typeof v === 'number');
      const field = key.replace(/Time$/, '');
      msInAll[field] = r3(seconds.reduce((a, b) => a + b, 0) * 1000);
      msPerToken[field] = seconds.length ? r3((msInAll[field] ?? 0) / seconds.length) : 0;
      if (key === 'totalTime') tokens = seconds.length;
    }
    return { offered: true, tokens, msPerToken, msInAll };
  }
}
