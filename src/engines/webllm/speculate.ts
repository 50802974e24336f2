/**
 * Speculative writing inside WebLLM's own request: WebLLM prefills the
 * prompt and writes the first token as always; each of its decode steps is
 * then replaced by one pass that drafts up to K tokens by prompt lookup (K
 * chosen before each pass from measurements, see adaptivePlan), runs [last
 * token + draft] through the model library's `batch_verify` (logits at
 * every position), keeps drafted tokens by the exact acceptance
 * rule under the request's own sampling, takes each written token into the
 * pipeline as a decode step would (stop tokens, stop strings, max_tokens and
 * the context window stop it where they stop plain decoding), and pops the
 * KV cache back to what plain decoding would hold. WebLLM's request loop
 * around it streams, hears interrupts between passes and reports usage as
 * usual.
 */
import type { WritingStats } from '../../core/generation';
import { DraftLength, MAX_DRAFT } from '../../core/draft-length';
import { DEFAULT_LOOKUP, lookupDraft } from '../../core/prompt-lookup';
import { applyPenalties, samplingDistribution, verifyPass } from '../../core/speculative';
import { commitToken, type CommittingPipeline, penaltiesOf, type SamplingFields, samplingOf, verifyBlocker, type WebLLMVersion } from './versions';

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
}

/** The slice of WebLLM's LLMChatPipeline (both versions) that a verify pass drives. */
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

export interface SpeculationPlan {
  /** Drafted tokens per pass at most: K itself where there is no tuner. */
  maxDraft: number;
  /** The longest n-gram looked up. */
  maxNgram: number;
  /** Drafts for the reply so far in place of prompt lookup (the benchmark's oracle and partly right drafts). */
  draft?: (written: readonly number[]) => readonly number[];
  /**
   * Chooses K for each pass (at most maxDraft) from the passes it has seen,
   * and learns from each; shared by a run's requests so that it learns
   * across the run's steps. Without one K is maxDraft, fixed.
   */
  tuner?: DraftLength;
}

/**
 * The app's plan: K chosen before each pass by a tuner of its own, which
 * estimates the share of drafted tokens kept and the cost of a verify pass
 * per drafted token from this run's passes and drafts the K that writes the
 * most tokens a second (see DraftLength), at most MAX_DRAFT. A fixed K would
 * be a guess: how often prompt lookup is right depends on the book and the
 * model, and the cost per drafted token on the GPU.
 */
export function adaptivePlan(): SpeculationPlan {
  return { maxDraft: MAX_DRAFT, maxNgram: DEFAULT_LOOKUP.maxNgram, tuner: new DraftLength() };
}

/** A plan that drafts up to `k` tokens a pass, always (the benchmark's --draft, tests). */
export function fixedPlan(k: number, draft?: SpeculationPlan['draft']): SpeculationPlan {
  return { maxDraft: k, maxNgram: DEFAULT_LOOKUP.maxNgram, ...(draft && { draft }) };
}

const verifiers = new WeakMap<object, Packed>();
const poppers = new WeakMap<object, Packed>();

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

/** Whether this pipeline, for this request, can be driven by verify passes. */
export function canVerify(pipeline: VerifyPipeline, genConfig: GenConfig): boolean {
  if (verifyBlocker(pipeline) || !batchVerify(pipeline)) return false;
  // WebLLM's logit processors, biases, log-probabilities and grammars change sampling in ways a pass does not repeat.
  return !pipeline.logitProcessor && !genConfig?.logit_bias && !genConfig?.logprobs && !genConfig?.response_format;
}

/**
 * Runs `tokens` through the model in one forward and returns their logits
 * (one row of the vocabulary per token) on the CPU; the KV cache then holds
 * them all.
 */
export async function verifyForward(pipeline: VerifyPipeline, tokens: number[]): Promise<{ logits: Float32Array; vocab: number }> {
  const { tvm } = pipeline;
  const verify = batchVerify(pipeline);
  if (!verify) throw new Error('The model library has no batch_verify function.');
  tvm.beginScope();
  try {
    const embed = pipeline.getTokensEmbeddings(tokens);
    const input = embed.view([1, ...embed.shape]);
    pipeline.fKVCacheBeginForward(pipeline.kvCache, tvm.makeShapeTuple([0]), tvm.makeShapeTuple([tokens.length]));
    const out = verify(input, pipeline.kvCache, pipeline.params) as { get(i: number): Tensor };
    pipeline.fKVCacheEndForward(pipeline.kvCache);
    pipeline.filledKVCacheLength += tokens.length;
    const logits = out.get(0);
    const host = tvm.empty(logits.shape, logits.dtype, tvm.cpu());
    host.copyFrom(logits);
    await pipeline.device.sync();
    const vocab = logits.shape[logits.shape.length - 1]!;
    return { logits: Float32Array.from(host.toArray()), vocab };
  } finally {
    tvm.endScope();
  }
}

/** Drops the last `n` entries of the KV cache (the rejected drafts), and counts them out. */
export function rollback(pipeline: VerifyPipeline, n: number): void {
  if (n <= 0) return;
  const { tvm } = pipeline;
  const popn = popper(pipeline);
  tvm.beginScope();
  try {
    popn(pipeline.kvCache, tvm.scalar(0, 'int64'), tvm.scalar(n, 'int64'));
  } finally {
    tvm.endScope();
  }
  pipeline.filledKVCacheLength -= n;
}

/** One request's speculative writing: WebLLM's decode step is replaced by `decode` for its duration. */
export class SpeculativeDecoder {
  readonly stats: WritingStats = { passes: 0, drafted: 0, accepted: 0 };
  private prompt: number[] | undefined;

  constructor(
    private readonly version: WebLLMVersion,
    /** The request's prompt as text: prompt lookup drafts from its tokens. */
    private readonly promptText: string,
    private readonly plan: SpeculationPlan,
    private readonly random: () => number,
  ) {}

  /**
   * One forward pass in place of one decode step: `plain` (WebLLM's own
   * step) where there is nothing to draft or the request cannot be verified.
   */
  async decode(pipeline: VerifyPipeline, genConfig: GenConfig, plain: () => Promise<unknown>): Promise<void> {
    if (pipeline.stopTriggered) throw new Error('Cannot run decode when stopped');
    this.stats.passes++;
    const draft = canVerify(pipeline, genConfig) ? this.draftFor(pipeline, genConfig) : [];
    if (!draft.length) {
      const plainStarted = performance.now();
      await plain();
      this.plan.tuner?.observeDecode((performance.now() - plainStarted) / 1000);
      return;
    }
    const started = performance.now();
    const base = pipeline.filledKVCacheLength;
    const { logits, vocab } = await verifyForward(pipeline, [pipeline.outputIds.at(-1)!, ...draft]);
    const sampling = samplingOf(pipeline.config, genConfig);
    const penalties = penaltiesOf(this.version, pipeline.config, genConfig);
    let written = 0;
    const pass = verifyPass(
      draft,
      (i) => {
        const row = logits.subarray(i * vocab, (i + 1) * vocab);
        applyPenalties(row, pipeline.appearedTokensFreq, penalties);
        return samplingDistribution(row, sampling);
      },
      (token) => {
        // As plain decoding has it when this token is written: the cache holds everything before it.
        pipeline.filledKVCacheLength = base + 1 + written;
        written++;
        commitToken(this.version, pipeline, token, genConfig);
        return !pipeline.stopTriggered;
      },
      this.random,
    );
    // The cache holds base + 1 + draft.length; plain decoding would hold base + written.
    pipeline.filledKVCacheLength = base + 1 + draft.length;
    rollback(pipeline, 1 + draft.length - written);
    this.stats.drafted += draft.length;
    this.stats.accepted += pass.accepted;
    const seconds = (performance.now() - started) / 1000;
    // A pass can stop (a stop token, the cap) on a kept token: then no drafted token was rejected.
    const rejected = pass.accepted < draft.length && pass.written > pass.accepted;
    this.plan.tuner?.observePass({ drafted: draft.length, accepted: pass.accepted, rejected, seconds });
    pipeline.decodingTotalTime += seconds;
    pipeline.curRoundDecodingTotalTime += seconds;
    pipeline.decodingTotalTokens += written;
    pipeline.curRoundDecodingTotalTokens += written;
  }

  /** Up to K drafted tokens (the tuner's choice, or maxDraft), no more than the reply's cap and the context window leave room for. */
  private draftFor(pipeline: VerifyPipeline, genConfig: GenConfig): readonly number[] {
    const written = pipeline.outputIds;
    const cap = genConfig?.max_tokens ?? Infinity;
    const room = Math.min(
      this.plan.tuner?.next(this.plan.maxDraft) ?? this.plan.maxDraft,
      cap - written.length - 1, // the pass writes one more than it keeps
      pipeline.contextWindowSize - pipeline.filledKVCacheLength - 1,
      pipeline.prefillChunkSize - 1,
    );
    if (room <= 0) return [];
    if (this.plan.draft) return this.plan.draft(written).slice(0, room);
    this.prompt ??= Array.from(pipeline.tokenizer.encode(this.promptText));
    return lookupDraft(this.prompt, written, { maxNgram: this.plan.maxNgram, minNgram: 1, maxDraft: room });
  }
}
