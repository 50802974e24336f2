/**
 * The driver's batch part: with driver.ts (one request's sequence on
 * WebLLM's own cache), the only code that reaches into WebLLM's private
 * state. Here: a paged KV cache of its own with a sequence per request
 * (WebLLM's pipeline makes its own with one sequence), the model library's
 * batch_prefill / batch_decode / batch_verify on it, each request's prompt as
 * WebLLM's own request builds it (its engine's prefill and its pipeline's
 * getInputData wrapped for the call, its conversation code run and stopped
 * just before the prefill), each request's stop rules and text through
 * WebLLM's own token step (its reply fields and cache count swapped in on the
 * pipeline for the call), and the pipeline's chat reset after a batch.
 * batch-writer.ts orchestrates these operations through the BatchModel that
 * webllmBatchModel gives.
 */
import { applyPenalties, samplingDistribution } from '../../../core/speculative';
import type { FinishReason } from '../../../core/generation';
import type { BatchKernels, BatchModel, PreparedSequence, SequenceTokens, SequenceWriter } from './batch-model';
import { type GenConfig, type Packed, type Tensor, type VerifyPipeline } from './driver';
import type { Mlc } from './mlc';
import { commitToken, penaltiesOf, samplingOf, verifyBlocker, type WebLLMVersion } from '../versions';

/** WebLLM's pipeline as a batch reads it: the single-sequence driver's fields and the request state it keeps. */
export interface BatchPipeline extends VerifyPipeline {
  resetChat(keepStats?: boolean): unknown;
  getInputData?: (...args: unknown[]) => unknown;
  outputMessage: string;
  finishReason?: string;
}

/** The page size WebLLM gives its own cache. */
const PAGE = 16;

/**
 * One request's reply state on the pipeline: what WebLLM's prefill resets
 * and its token step reads and writes. Swapped in around each step.
 */
const REPLY_FIELDS = [
  'outputIds',
  'outputMessage',
  'stopTriggered',
  'finishReason',
  'appearedTokensFreq',
  'tokenLogprobArray',
  'conversation',
  'stopStr',
  'stopTokens',
] as const;
type ReplyState = Record<(typeof REPLY_FIELDS)[number], unknown>;

interface BatchFunctions {
  create: Packed;
  prefill: Packed;
  decode: Packed;
  verify?: Packed;
  add: Packed;
  remove: Packed;
  popn: Packed;
}

const functions = new WeakMap<object, BatchFunctions | null>();

function lookup(pipeline: VerifyPipeline, get: () => Packed): Packed | undefined {
  const { tvm } = pipeline;
  tvm.beginScope();
  try {
    return tvm.detachFromCurrentScope(get());
  } catch {
    return undefined; // a library or runtime without it
  } finally {
    tvm.endScope();
  }
}

/** The library's batched functions and the runtime's sequence functions; undefined where any needed one is missing. */
function batchFunctions(pipeline: VerifyPipeline): BatchFunctions | undefined {
  const known = functions.get(pipeline);
  if (known !== undefined) return known ?? undefined;
  const vm = (name: string) => lookup(pipeline, () => pipeline.vm.getFunction(name));
  const global = (name: string) => lookup(pipeline, () => pipeline.tvm.getGlobalFunc(name));
  const found = {
    create: vm('create_tir_paged_kv_cache'),
    prefill: vm('batch_prefill'),
    decode: vm('batch_decode'),
    verify: vm('batch_verify'),
    add: global('vm.builtin.kv_state_add_sequence'),
    remove: global('vm.builtin.kv_state_remove_sequence'),
    popn: global('vm.builtin.kv_state_popn'),
  };
  const { create, prefill, decode, add, remove, popn } = found;
  const all = create && prefill && decode && add && remove && popn ? { create, prefill, decode, add, remove, popn, verify: found.verify } : null;
  functions.set(pipeline, all);
  return all ?? undefined;
}

/** Why a loaded pipeline cannot write a batch, or undefined where it can. */
export function batchBlocker(pipeline: VerifyPipeline): string | undefined {
  const blocker = verifyBlocker(pipeline);
  if (blocker) return blocker;
  if (pipeline.logitProcessor) return 'the model has a logit processor';
  if (!batchFunctions(pipeline)) return 'the model library has no batch_prefill and batch_decode';
  return undefined;
}

/** A cache of the library's kind with one sequence (ids 0…) per entry of `capacities`, pages for all of them. */
function createCache(pipeline: VerifyPipeline, f: BatchFunctions, capacities: readonly number[]): Disposable {
  const { tvm } = pipeline;
  const total = capacities.reduce((n, c) => n + Math.ceil(c / PAGE) * PAGE, 0) + PAGE;
  let cache: Disposable | undefined;
  tvm.beginScope();
  try {
    cache = tvm.detachFromCurrentScope(
      f.create(
        tvm.makeShapeTuple([capacities.length]), // max_num_sequence
        tvm.makeShapeTuple([total]), // max_total_sequence_length
        tvm.makeShapeTuple([pipeline.prefillChunkSize]),
        tvm.makeShapeTuple([PAGE]),
        tvm.makeShapeTuple([0]), // no sliding window
      ) as Disposable,
    );
    for (let seq = 0; seq < capacities.length; seq++) f.add(cache, tvm.scalar(seq, 'int64'));
    return cache;
  } catch (e) {
    cache?.dispose?.();
    throw e;
  } finally {
    tvm.endScope();
  }
}

type Disposable = { dispose?(): void };

/** One forward on `kv` over `parts` (each after what its sequence holds), run by `run`; its logits on the CPU, a row per output. */
async function forwardOn(pipeline: VerifyPipeline, kv: Disposable, parts: readonly SequenceTokens[], run: (embed: Tensor, total: number) => unknown) {
  const { tvm } = pipeline;
  tvm.beginScope();
  let begun = false;
  try {
    const all = parts.flatMap((p) => [...p.tokens]);
    const embed = pipeline.getTokensEmbeddings(all);
    pipeline.fKVCacheBeginForward(kv, tvm.makeShapeTuple(parts.map((p) => p.seq)), tvm.makeShapeTuple(parts.map((p) => p.tokens.length)));
    begun = true;
    const out = run(embed, all.length) as { get(i: number): Tensor };
    begun = false;
    pipeline.fKVCacheEndForward(kv);
    const logits = out.get(0);
    const host = tvm.empty(logits.shape, logits.dtype, tvm.cpu());
    host.copyFrom(logits);
    await pipeline.device.sync();
    const flat = Float32Array.from(host.toArray());
    const vocab = logits.shape[logits.shape.length - 1]!;
    return Array.from({ length: flat.length / vocab }, (_, i) => flat.slice(i * vocab, (i + 1) * vocab));
  } finally {
    if (begun) {
      try {
        pipeline.fKVCacheEndForward(kv);
      } catch {
        // the forward's own failure is the one to report
      }
    }
    tvm.endScope();
  }
}

/** The embeddings of a pass as the kernel takes them: `[1, total, hidden]` (prefill, verify) or `[total, 1, hidden]` (decode). */
const shaped = (embed: Tensor, shape: (hidden: number) => number[]) => embed.view(shape(embed.shape[embed.shape.length - 1]!));

/**
 * A KV cache with one sequence per entry of `capacities` (ids 0…), made as
 * WebLLM's pipeline makes its own but with that many sequences and pages for
 * all of them, and the batched kernels on it.
 */
export function openBatchKernels(pipeline: VerifyPipeline, capacities: readonly number[]): BatchKernels {
  const f = batchFunctions(pipeline);
  if (!f) throw new Error(`This model cannot write a batch: ${batchBlocker(pipeline)}.`);
  const { tvm } = pipeline;
  const kv = createCache(pipeline, f, capacities);
  const scalarCall = (fn: Packed, ...args: number[]) => {
    tvm.beginScope();
    try {
      fn(kv, ...args.map((a) => tvm.scalar(a, 'int64')));
    } finally {
      tvm.endScope();
    }
  };
  return {
    prefill: (parts) => {
      // Each part's last token's index in the concatenation: where its logits are read.
      const positions: number[] = [];
      let at = -1;
      for (const p of parts) positions.push((at += p.tokens.length));
      return forwardOn(pipeline, kv, parts, (embed, n) => {
        const where = tvm.empty([parts.length], 'int32', pipeline.device);
        where.copyFrom(positions);
        return f.prefill(
          shaped(embed, (h) => [1, n, h]),
          where,
          kv,
          pipeline.params,
        );
      });
    },
    decode: (parts) =>
      forwardOn(pipeline, kv, parts, (embed, n) =>
        f.decode(
          shaped(embed, (h) => [n, 1, h]),
          kv,
          pipeline.params,
        ),
      ),
    verify: async (parts) => {
      const verify = f.verify;
      if (!verify) throw new Error('The model library has no batch_verify function.');
      const all = await forwardOn(pipeline, kv, parts, (embed, n) =>
        verify(
          shaped(embed, (h) => [1, n, h]),
          kv,
          pipeline.params,
        ),
      );
      let at = 0;
      return parts.map((p) => all.slice(at, (at += p.tokens.length)));
    },
    popn: (seq, n) => scalarCall(f.popn, seq, n),
    remove: (seq) => scalarCall(f.remove, seq),
    dispose: () => kv.dispose?.(),
  };
}

/** Thrown from inside WebLLM's prefill once the prompt is known, so that nothing is run. */
class PromptKnown extends Error {
  constructor() {
    super('The prompt was read; its prefill is the batch’s.');
  }
}

/** Puts an object's own property back as it was (or gone, where it was inherited). */
function restore(target: object, key: string, before: PropertyDescriptor | undefined): void {
  if (before) Object.defineProperty(target, key, before);
  else delete (target as Record<string, unknown>)[key];
}

/** A conversation of WebLLM's, its messages copied: what a later reset or reply of another request does not touch. */
function copyConversation(conversation: unknown): unknown {
  if (typeof conversation !== 'object' || conversation === null) return conversation;
  const messages = (conversation as { messages?: unknown }).messages;
  const copy = Object.assign(Object.create(Object.getPrototypeOf(conversation) as object) as object, conversation);
  if (Array.isArray(messages)) (copy as { messages: unknown[] }).messages = messages.map((m) => (Array.isArray(m) ? [...m] : m));
  return copy;
}

function readState(pipeline: BatchPipeline): ReplyState {
  const p = pipeline as unknown as Record<string, unknown>;
  return Object.fromEntries(REPLY_FIELDS.map((k) => [k, p[k]])) as ReplyState;
}

/**
 * One request as WebLLM would start it: its own chat request (`body`, not
 * streamed) runs through WebLLM's conversation code and its prompt encoding,
 * and is stopped where the prompt's token ids are known, before any forward.
 * Gives those ids and the request's reply state, which WebLLM's own token
 * step then updates for it. WebLLM's refusals (a prompt over the window)
 * come out as they would from its request.
 */
export async function prepareSequence(version: WebLLMVersion, mlc: Mlc, pipeline: BatchPipeline, body: Record<string, unknown>): Promise<PreparedSequence> {
  const engine = mlc as Mlc & { prefill?: (input: unknown, pipeline: unknown, chatConfig: unknown, genConfig: unknown) => Promise<unknown> };
  const ownPrefill = engine.prefill;
  const ownInput = pipeline.getInputData;
  if (!ownPrefill || !ownInput) throw new Error(`WebLLM ${version.version} has no prefill step to read a prompt from.`);
  let genConfig: GenConfig;
  let prompt: number[] | undefined;
  let state: ReplyState | undefined;
  const known = (data: unknown) => {
    const pieces = (data as unknown[])[0] as unknown[];
    if (!pieces.every(Array.isArray)) throw new Error('A batch writes text prompts only.');
    prompt = (pieces as number[][]).flat();
    // The prefill has reset the reply state and set the request's conversation: each request keeps its own copies.
    const s = readState(pipeline);
    state = {
      ...s,
      outputIds: [...(s.outputIds as number[])],
      appearedTokensFreq: new Map(s.appearedTokensFreq as Map<number, number>),
      tokenLogprobArray: [],
      // WebLLM resets the pipeline's conversation in place for the next request; the reply finishes this one's copy.
      conversation: copyConversation(s.conversation),
    };
    throw new PromptKnown();
  };
  const prefillBefore = Object.getOwnPropertyDescriptor(engine, 'prefill');
  const inputBefore = Object.getOwnPropertyDescriptor(pipeline, 'getInputData');
  engine.prefill = (input, p, chatConfig, config) => {
    genConfig = config as GenConfig;
    return ownPrefill.call(engine, input, p, chatConfig, config);
  };
  pipeline.getInputData = function (this: unknown, ...args: unknown[]) {
    const out = ownInput.apply(this, args);
    // 0.2.79 reads the prompt at once, 0.2.86 awaits it.
    return out instanceof Promise ? out.then(known) : known(out);
  };
  try {
    pipeline.resetChat(); // a fresh conversation: the whole prompt is encoded, none taken as already in the cache
    // Not streamed, so that WebLLM's prefill is awaited inside the call (and stream options are refused there).
    const request: Record<string, unknown> = { ...body, stream: false };
    delete request.stream_options;
    // The batch samples with each request's own seed. WebLLM would set the seed on its pipeline and
    // put a fresh one back only after a reply it writes, which this request never reaches: it would stay set.
    delete request.seed;
    await mlc.chat.completions.create(request);
    throw new Error('WebLLM wrote a reply where only its prompt was to be read.');
  } catch (e) {
    if (!(e instanceof PromptKnown)) throw e;
  } finally {
    restore(engine, 'prefill', prefillBefore);
    restore(pipeline, 'getInputData', inputBefore);
  }
  if (!prompt || !state) throw new Error('WebLLM never read the prompt.');
  return { prompt, writer: sequenceWriter(version, pipeline, genConfig, state) };
}

/**
 * A request's writing through WebLLM's own token step: its reply state is put
 * on the pipeline for each step and read back after it, so stop tokens, stop
 * strings, max_tokens, the window and the text come out as WebLLM's would.
 */
function sequenceWriter(version: WebLLMVersion, pipeline: BatchPipeline, genConfig: GenConfig, state: ReplyState): SequenceWriter {
  const fields = pipeline as unknown as Record<string, unknown>;
  const ids = () => state.outputIds as number[];
  return {
    written: ids,
    text: () => state.outputMessage as string,
    stopped: () => state.stopTriggered === true,
    finishReason: (): FinishReason => (state.finishReason === 'length' ? 'length' : state.finishReason === 'abort' ? 'abort' : 'stop'),
    distribution: (row) => {
      applyPenalties(row, state.appearedTokensFreq as Map<number, number>, penaltiesOf(version, pipeline.config, genConfig));
      return samplingDistribution(row, samplingOf(pipeline.config, genConfig));
    },
    commit: (token, cached) => {
      for (const k of REPLY_FIELDS) fields[k] = state[k];
      pipeline.filledKVCacheLength = cached;
      try {
        commitToken(version, pipeline, token, genConfig);
      } finally {
        Object.assign(state, readState(pipeline));
      }
      return state.stopTriggered !== true;
    },
  };
}

/**
 * The row of logits WebLLM's own last sampling step read, where it keeps it
 * on the CPU (0.2.79 does, before penalties that are off here change it):
 * what the real-kernel test compares a batch's rows with.
 */
export function lastLogits(pipeline: VerifyPipeline): Float32Array | undefined {
  const held = (pipeline as unknown as { logitsOnCPU?: Tensor }).logitsOnCPU;
  return held ? Float32Array.from(held.toArray()) : undefined;
}

/** What a batch on the loaded pipeline needs from the session. */
export interface BatchOnWebLLM {
  version: WebLLMVersion;
  mlc: Mlc;
  pipeline: BatchPipeline;
  /** Request `index`'s chat request, as a single request would send it. */
  body(index: number): Record<string, unknown>;
}

/** The model a batch is written on (see batch-writer.ts), on WebLLM's loaded pipeline: its requests prepared by WebLLM's own code. */
export function webllmBatchModel(b: BatchOnWebLLM): BatchModel {
  const { version, mlc, pipeline } = b;
  return {
    prepare: (i) => prepareSequence(version, mlc, pipeline, b.body(i)),
    open: (capacities) => openBatchKernels(pipeline, capacities),
    chunk: pipeline.prefillChunkSize,
    window: pipeline.contextWindowSize,
  };
}

/** After a batch: the last request's conversation is the batch's, not one WebLLM should extend with the next request. */
export function endBatch(pipeline: BatchPipeline): void {
  try {
    pipeline.resetChat();
  } catch {
    // a pipeline that cannot reset after a lost device is freed by the session
  }
}
