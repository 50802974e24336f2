/**
 * With its batch part, driver-batch.ts, the one module that reaches into
 * WebLLM's private state: its chat pipeline's fields, the model library's
 * functions and the engine's decode step (what differs between WebLLM
 * versions stays data in versions.ts). This file holds one request's
 * sequence on WebLLM's own cache; everything that drives the model beyond
 * WebLLM's public API (speculative writing, batches) is an orchestration
 * over the operations of the two.
 */
import { applyPenalties, decide, type Distribution, type Sampling, samplingDistribution } from '../../../core/speculative';
import { cleanUpQuietly } from '../../../core/failures';
import type { Mlc } from './mlc';
import { commitToken, type CommittingPipeline, penaltiesOf, type SamplingFields, samplingOf, verifyBlocker, type WebLLMVersion } from '../versions';

/** A tensor as tvmjs gives it: on the GPU or the CPU. */
export interface Tensor {
  shape: number[];
  dtype: string;
  view(shape: number[]): Tensor;
  copyFrom(source: Tensor | ArrayLike<number>): Tensor;
  toArray(): ArrayLike<number>;
  dispose(): void;
}

/** A compiled function (tvmjs PackedFunc). */
export type Packed = ((...args: unknown[]) => unknown) & { dispose?(): void };

/** The slice of tvmjs's Instance used here. */
export interface TvmLike {
  beginScope(): void;
  endScope(): void;
  detachFromCurrentScope<T>(value: T): T;
  makeShapeTuple(shape: number[]): unknown;
  scalar(value: number, dtype: string): unknown;
  empty(shape: number[], dtype: string, device: unknown): Tensor;
  cpu(): unknown;
  getGlobalFunc(name: string): Packed;
  /** The runtime's own functions; its CPU sampler takes the uniform draw as an argument. */
  ctx?: { sampleTopPFromLogits?: (logits: Tensor, temperature: number, topP: number, uniform: number) => number };
}

/** The slice of WebLLM's LLMChatPipeline (both versions) that the driver reads and writes. */
export interface VerifyPipeline extends CommittingPipeline {
  tvm: TvmLike;
  vm: { getFunction(name: string): Packed };
  params: unknown;
  device: { sync(): Promise<unknown> };
  kvCache?: unknown;
  rnnState?: unknown;
  artifact?: unknown;
  config: SamplingFields;
  tokenizer: { encode(text: string): ArrayLike<number> };
  outputIds: number[];
  appearedTokensFreq: Map<number, number>;
  filledKVCacheLength: number;
  contextWindowSize: number;
  prefillChunkSize: number;
  stopTriggered: boolean;
  fKVCacheBeginForward: Packed;
  fKVCacheEndForward: Packed;
  getTokensEmbeddings(tokens: number[]): Tensor;
  decodingTotalTime: number;
  decodingTotalTokens: number;
  curRoundDecodingTotalTokens: number;
  curRoundDecodingTotalTime: number;
}

/** The generation config WebLLM hands its decode step. */
export type GenConfig = (SamplingFields & { max_tokens?: number | null; logit_bias?: unknown; logprobs?: unknown; response_format?: unknown }) | undefined;

/** One forward's logits on the CPU: a row of the vocabulary per token run. */
export interface Logits {
  logits: Float32Array;
  vocab: number;
}

/**
 * What an orchestration of one request's writing may do with the model, one
 * decode step's worth at a time: the operations speculation needs, on one
 * sequence (WebLLM's), so that the orchestration can be tested on a fake.
 */
export interface WritingDriver {
  /** The reply's token ids so far. */
  written(): readonly number[];
  /** Whether the reply has ended (a stop token, its cap, the window). */
  stopped(): boolean;
  /** Whether a forward over several tokens can be run and undone for this request. */
  verifiable(): boolean;
  /** The most drafted tokens a pass may run now: the reply's cap, the window and a prefill chunk leave this room. */
  room(): number;
  /** The request's prompt as the model's token ids. */
  encode(text: string): number[];
  /** Runs `tokens` through the model after what the cache holds; the cache then holds them too. */
  forward(tokens: number[]): Promise<Logits>;
  /** The request's sampling distribution for one row of logits (penalties as the reply stands). */
  distribution(row: Float32Array): Distribution;
  /** Takes a written token into the reply as a decode step would, with the cache then `cached` long before it; false once the reply has ended. */
  commit(token: number, cached: number): boolean;
  /** Entries the cache holds. */
  cached(): number;
  /** Drops the cache's last entries so that it holds `length` (the rejected drafts); checks that it then does. */
  truncate(length: number): void;
  /** Counts a pass's seconds and written tokens into WebLLM's decode figures, as its own step counts them. */
  countDecode(seconds: number, tokens: number): void;
}

const verifiers = new WeakMap<object, Packed>();
const poppers = new WeakMap<object, Packed>();

/**
 * A function looked up from the runtime, kept past any scope. tvmjs puts
 * every function it hands out into the current scope and refuses when there
 * is none; WebLLM calls its decode step outside any, so the lookup gets a
 * scope of its own.
 */
function detached(tvm: TvmLike, lookup: () => Packed): Packed {
  tvm.beginScope();
  try {
    return tvm.detachFromCurrentScope(lookup());
  } finally {
    tvm.endScope();
  }
}

/** The model library's `batch_verify`, or undefined where it has none (then nothing is speculated). */
export function batchVerify(pipeline: VerifyPipeline): Packed | undefined {
  if (verifiers.has(pipeline)) return verifiers.get(pipeline);
  let f: Packed | undefined;
  try {
    f = detached(pipeline.tvm, () => pipeline.vm.getFunction('batch_verify'));
  } catch {
    f = undefined; // an older library: WebLLM's own decoding writes its replies
  }
  if (f) verifiers.set(pipeline, f);
  return f;
}

function popper(pipeline: VerifyPipeline): Packed {
  let f = poppers.get(pipeline.tvm);
  if (!f) poppers.set(pipeline.tvm, (f = detached(pipeline.tvm, () => pipeline.tvm.getGlobalFunc('vm.builtin.kv_state_popn'))));
  return f;
}

/** Whether a loaded pipeline can run and undo several tokens at once: a KV cache and a library with batch_verify. */
export function canVerifyPipeline(pipeline: VerifyPipeline): boolean {
  return !verifyBlocker(pipeline) && !!batchVerify(pipeline);
}

/**
 * Runs `tokens` through the model in one forward and returns their logits
 * on the CPU. The cache holds them all afterwards; where the forward fails
 * after the cache took them, they are popped again, so a failure leaves the
 * cache as it found it.
 */
export async function verifyForward(pipeline: VerifyPipeline, tokens: number[]): Promise<Logits> {
  const { tvm } = pipeline;
  const verify = batchVerify(pipeline);
  if (!verify) throw new Error('The model library has no batch_verify function.');
  const before = pipeline.filledKVCacheLength;
  let begun = false;
  let ended = false;
  tvm.beginScope();
  try {
    const embed = pipeline.getTokensEmbeddings(tokens);
    const input = embed.view([1, ...embed.shape]);
    pipeline.fKVCacheBeginForward(pipeline.kvCache, tvm.makeShapeTuple([0]), tvm.makeShapeTuple([tokens.length]));
    begun = true; // the cache has grown by the tokens from here on
    const out = verify(input, pipeline.kvCache, pipeline.params) as { get(i: number): Tensor };
    pipeline.fKVCacheEndForward(pipeline.kvCache);
    ended = true;
    const logits = out.get(0);
    const host = tvm.empty(logits.shape, logits.dtype, tvm.cpu());
    host.copyFrom(logits);
    await pipeline.device.sync();
    const vocab = logits.shape[logits.shape.length - 1]!;
    const result = { logits: Float32Array.from(host.toArray()), vocab };
    pipeline.filledKVCacheLength = before + tokens.length;
    return result;
  } catch (e) {
    if (begun) {
      if (!ended) {
        try {
          pipeline.fKVCacheEndForward(pipeline.kvCache);
        } catch {
          // the forward's own failure is the one to report; the pop below still restores the count
        }
      }
      pipeline.filledKVCacheLength = before + tokens.length;
      cleanUpQuietly('Popping a failed forward from the KV cache', () => truncateCache(pipeline, before));
    }
    throw e;
  } finally {
    tvm.endScope();
  }
}

/**
 * Pops the cache back to `length` entries. WebLLM checks its count after
 * every forward; so does this, so that a count that disagrees with the cache
 * fails here and not in a later step.
 */
export function truncateCache(pipeline: VerifyPipeline, length: number): void {
  const n = pipeline.filledKVCacheLength - length;
  if (n < 0) throw new Error(`Cannot truncate the KV cache from ${pipeline.filledKVCacheLength} to ${length} entries.`);
  if (n === 0) return;
  const { tvm } = pipeline;
  const popn = popper(pipeline);
  tvm.beginScope();
  try {
    popn(pipeline.kvCache, tvm.scalar(0, 'int64'), tvm.scalar(n, 'int64'));
  } finally {
    tvm.endScope();
  }
  pipeline.filledKVCacheLength -= n;
  if (pipeline.filledKVCacheLength !== length) throw new Error(`The KV cache holds ${pipeline.filledKVCacheLength} entries, not ${length}.`);
}

/**
 * The driver of one decode step's writing on WebLLM's pipeline. While a pass
 * commits tokens, WebLLM's count of cache entries reads as plain decoding
 * would have it at each token (its window check needs that), so the entries
 * the cache really holds are kept here.
 */
export function pipelineDriver(version: WebLLMVersion, pipeline: VerifyPipeline, genConfig: GenConfig): WritingDriver {
  let held = pipeline.filledKVCacheLength;
  return {
    written: () => pipeline.outputIds,
    stopped: () => pipeline.stopTriggered,
    verifiable: () =>
      canVerifyPipeline(pipeline) &&
      // WebLLM's logit processors, biases, log-probabilities and grammars change sampling in ways a pass does not repeat.
      !pipeline.logitProcessor &&
      !genConfig?.logit_bias &&
      !genConfig?.logprobs &&
      !genConfig?.response_format,
    room: () =>
      Math.min(
        (genConfig?.max_tokens ?? Infinity) - pipeline.outputIds.length - 1, // the pass writes one more than it keeps
        pipeline.contextWindowSize - held - 1,
        pipeline.prefillChunkSize - 1,
      ),
    encode: (text) => Array.from(pipeline.tokenizer.encode(text)),
    forward: async (tokens) => {
      pipeline.filledKVCacheLength = held;
      const out = await verifyForward(pipeline, tokens);
      held += tokens.length;
      return out;
    },
    distribution: (row) => {
      applyPenalties(row, pipeline.appearedTokensFreq, penaltiesOf(version, pipeline.config, genConfig));
      return samplingDistribution(row, samplingOf(pipeline.config, genConfig));
    },
    commit: (token, cached) => {
      pipeline.filledKVCacheLength = cached;
      commitToken(version, pipeline, token, genConfig);
      return !pipeline.stopTriggered;
    },
    cached: () => held,
    truncate: (length) => {
      pipeline.filledKVCacheLength = held;
      truncateCache(pipeline, length);
      held = length;
    },
    countDecode: (seconds, tokens) => {
      pipeline.decodingTotalTime += seconds;
      pipeline.curRoundDecodingTotalTime += seconds;
      pipeline.decodingTotalTokens += tokens;
      pipeline.curRoundDecodingTotalTokens += tokens;
    },
  };
}

/**
 * WebLLM's runtime sampler (temperature, softmax and top-p on the CPU, as
 * its decode step samples where logits are on the CPU), called on given
 * logits with a given uniform draw; undefined where the runtime has none.
 */
export function webllmSampler(pipeline: VerifyPipeline): ((row: Float32Array, sampling: Sampling, u: number) => number) | undefined {
  const { tvm } = pipeline;
  const sample = tvm.ctx?.sampleTopPFromLogits;
  if (!sample) return undefined;
  return (row, sampling, u) => {
    tvm.beginScope();
    try {
      const logits = tvm.empty([row.length], 'float32', tvm.cpu());
      logits.copyFrom(row);
      return Number(sample.call(tvm.ctx, logits, sampling.temperature, sampling.topP, u));
    } finally {
      tvm.endScope();
    }
  };
}

/** A pipeline's sampling step: a token from one forward's logits, still on the GPU (see WebLLMVersion.sampler). */
type SampleStep = (logitsOnGPU: Tensor, genConfig?: GenConfig) => Promise<number>;

/**
 * Runs `work` with the pipeline's own sampling step (after the prefill and
 * each decode step) replaced by the one a batch samples each sequence with
 * (driver-batch.ts): the logits copied to the CPU, penalties, tempered
 * softmax and top-p there, and a draw with `random` (one number per reply
 * position, replyRandom). A request alone then writes what its sequence in a
 * batch writes. A request with a logit processor, biases, log-probabilities
 * or a grammar keeps WebLLM's own step (the app sends none of them). WebLLM's
 * step is put back however `work` ends.
 */
export async function withAppSampler<T>(version: WebLLMVersion, pipeline: VerifyPipeline, random: () => number, work: () => Promise<T>): Promise<T> {
  const name = version.sampler;
  const fields = pipeline as unknown as Record<string, unknown> & { updateLogitsOnCPU?: (logits: Tensor) => Tensor };
  const own = fields[name];
  const toCPU = fields.updateLogitsOnCPU;
  if (typeof own !== 'function' || typeof toCPU !== 'function') throw new Error(`WebLLM ${version.version}'s pipeline has no ${name} step to sample with.`);
  const before = Object.getOwnPropertyDescriptor(pipeline, name);
  const sample: SampleStep = async (logits, genConfig) => {
    if (pipeline.logitProcessor || genConfig?.logit_bias || genConfig?.logprobs || genConfig?.response_format) {
      return (own as SampleStep).call(pipeline, logits, genConfig);
    }
    const { tvm } = pipeline;
    tvm.beginScope();
    let held: Tensor;
    try {
      held = toCPU.call(pipeline, logits); // WebLLM's own copy, kept on the pipeline as its sampler keeps it
    } finally {
      tvm.endScope();
    }
    await pipeline.device.sync();
    const row = Float32Array.from(held.toArray());
    return decide(pipelineDriver(version, pipeline, genConfig).distribution(row), undefined, random).token;
  };
  fields[name] = sample;
  try {
    return await work();
  } finally {
    if (before) Object.defineProperty(pipeline, name, before);
    else delete fields[name];
  }
}

/** A decode step in WebLLM's engine: (pipeline, genConfig) → the step, with WebLLM's own step to fall back on. */
export type DecodeHook = (pipeline: VerifyPipeline, genConfig: GenConfig, own: () => Promise<unknown>) => Promise<void>;

/**
 * Runs `work` with `hook` in place of `mlc`'s decode step, and puts WebLLM's
 * own step back however `work` ends.
 */
export async function withDecodeHook<T>(mlc: Mlc, hook: DecodeHook, work: () => Promise<T>): Promise<T> {
  const own = mlc.decode?.bind(mlc);
  if (!own) throw new Error('This WebLLM engine has no decode step to replace.');
  const before = Object.getOwnPropertyDescriptor(mlc, 'decode');
  mlc.decode = (pipeline, genConfig) => hook(pipeline as VerifyPipeline, genConfig as GenConfig, () => own(pipeline, genConfig));
  try {
    return await work();
  } finally {
    if (before) Object.defineProperty(mlc, 'decode', before);
    else delete mlc.decode;
  }
}

/** The token ids of the reply WebLLM's pipeline last wrote (none where there is no pipeline). */
/** How many tokens the pipeline's reply holds so far: the position of the next token drawn. */
export function replyLength(pipeline: unknown): number {
  return (pipeline as { outputIds?: number[] } | undefined)?.outputIds?.length ?? 0;
}

export function replyTokens(pipeline: unknown): number[] {
  const written = (pipeline as { outputIds?: number[] } | undefined)?.outputIds;
  return written ? [...written] : [];
}
