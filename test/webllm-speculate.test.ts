import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { DraftLength, MAX_DRAFT } from '../src/core/draft-length';
import { argmax } from '../src/core/speculative';
import {
  adaptivePlan,
  type GenConfig,
  type Packed,
  SpeculativeDecoder,
  type SpeculationPlan,
  type Tensor,
  type VerifyPipeline,
} from '../src/engines/webllm/speculate';
import { WEBLLM_0_2_79, WEBLLM_0_2_86, type WebLLMVersion } from '../src/engines/webllm/versions';

const VOCAB = 16;
const STOP = 15;

/** The stand-in model: its next token depends on the last two tokens in the cache and on the cache's length, so a cache left wrong shows. */
function nextLogits(cache: readonly number[]): Float32Array {
  const row = new Float32Array(VOCAB);
  const top = (cache.at(-1)! * 3 + (cache.at(-2) ?? 0) * 5 + cache.length) % (VOCAB - 1);
  for (let t = 0; t < VOCAB; t++) row[t] = -Math.abs(t - top);
  row[top] = 2;
  // A stop token once the cache is long enough, so that replies end on their own.
  if (cache.length >= 30) row[STOP] = 3;
  return row;
}

/**
 * The stand-in's clock, in milliseconds: a forward over n tokens takes what
 * the H200 measured (115 ms + 2.5 ms a token), a decode step 55 ms. Tests
 * that time passes read it in place of performance.now.
 */
const clock = { ms: 0 };

/** What the stand-in runtime's scopes have disposed. */
const disposed = new WeakSet<object>();

class FakeTensor implements Tensor {
  constructor(
    public data: Float32Array,
    public shape: number[],
    public dtype = 'float32',
  ) {}
  view(shape: number[]): Tensor {
    return new FakeTensor(this.data, shape, this.dtype);
  }
  copyFrom(source: Tensor | ArrayLike<number>): Tensor {
    this.data = Float32Array.from(source instanceof FakeTensor ? source.data : (source as ArrayLike<number>));
    return this;
  }
  toArray(): ArrayLike<number> {
    return this.data;
  }
  dispose(): void {}
}

/**
 * A stand-in for WebLLM's LLMChatPipeline over a KV cache of token ids: the
 * same fields a verify pass reads and writes, `processNextToken` with
 * WebLLM's stop rules, and WebLLM's plain decode step.
 */
class StandInPipeline implements VerifyPipeline {
  kv: number[] = [];
  forwards = 0;
  outputIds: number[] = [];
  appearedTokensFreq = new Map<number, number>();
  filledKVCacheLength = 0;
  stopTriggered = false;
  finishReason: string | undefined;
  decodingTotalTime = 0;
  decodingTotalTokens = 0;
  curRoundDecodingTotalTokens = 0;
  curRoundDecodingTotalTime = 0;
  curRoundCompletionTotalTokens = 0;
  prefillChunkSize = 64;
  kvCache = { kind: 'kv' };
  params = {};
  config = { temperature: 0.7, top_p: 0.95, repetition_penalty: 1 };
  device = { sync: async () => undefined };
  tokenizer = { encode: (text: string) => text.split(' ').map(Number) };
  /** tvmjs's scopes: what a scope holds is disposed when it ends. */
  scopes: object[][] = [];
  tvm = {
    beginScope: () => void this.scopes.push([]),
    endScope: () => this.scopes.pop()?.forEach((o) => disposed.add(o)),
    detachFromCurrentScope: <T>(v: T): T => {
      const scope = this.scopes.at(-1) ?? [];
      if (!scope.includes(v as object)) throw new Error('Cannot find obj in the current auto conversion pool');
      scope.splice(scope.indexOf(v as object), 1);
      return v;
    },
    makeShapeTuple: (shape: number[]) => shape,
    scalar: (value: number) => ({ value }),
    empty: (shape: number[]) => new FakeTensor(new Float32Array(shape.reduce((a, b) => a * b, 1)), shape),
    cpu: () => 'cpu',
    getGlobalFunc: (name: string): Packed => {
      if (name !== 'vm.builtin.kv_state_popn') throw new Error(name);
      return this.scoped((_kv: unknown, _seq: unknown, n: { value: number }) => void this.kv.splice(this.kv.length - n.value));
    },
  };
  vm = {
    getFunction: (name: string): Packed => {
      if (name !== 'batch_verify') throw new Error(`Cannot find function ${name}`);
      return this.scoped((input: FakeTensor) => {
        this.forwards++;
        clock.ms += 115 + 2.5 * (input.data.length - 1);
        const rows = new Float32Array(input.data.length * VOCAB);
        input.data.forEach((t, i) => {
          this.kv.push(t);
          rows.set(this.logits(this.kv), i * VOCAB);
        });
        return { get: () => new FakeTensor(rows, [1, input.data.length, VOCAB]) };
      });
    },
  };
  fKVCacheBeginForward = (() => undefined) as Packed;
  fKVCacheEndForward = (() => undefined) as Packed;

  constructor(
    readonly contextWindowSize: number,
    readonly maxTokens: number,
  ) {}

  /** A function as tvmjs hands it out: held by the current scope (there must be one), unusable once disposed. */
  private scoped(f: (...args: never[]) => unknown): Packed {
    const scope = this.scopes.at(-1);
    if (!scope) throw new Error('Must call beginScope to use functions that returns TVM objects');
    const packed: Packed = (...args: unknown[]) => {
      if (disposed.has(packed)) throw new Error('The function has been disposed');
      return (f as (...a: unknown[]) => unknown)(...args);
    };
    scope.push(packed);
    return packed;
  }

  getTokensEmbeddings(tokens: number[]): Tensor {
    return new FakeTensor(Float32Array.from(tokens), [tokens.length]);
  }

  /** WebLLM's rules for a written token: a stop token ends the reply unwritten; the cap and a full window end it after. */
  processNextToken(token: number, genConfig: GenConfig): void {
    if (this.stopTriggered) throw new Error('Cannot call process when it is stopped');
    if (token === STOP) {
      this.stopTriggered = true;
      this.finishReason = 'stop';
    } else {
      this.outputIds.push(token);
      this.appearedTokensFreq.set(token, (this.appearedTokensFreq.get(token) ?? 0) + 1);
    }
    if (this.outputIds.length >= (genConfig?.max_tokens ?? Infinity)) {
      this.stopTriggered = true;
      this.finishReason = 'length';
    }
    if (this.filledKVCacheLength === this.contextWindowSize) {
      this.stopTriggered = true;
      this.finishReason = 'length';
    }
  }

  /** 0.2.86's path for a written token. */
  commitSampledToken(token: number, genConfig: GenConfig): void {
    this.processNextToken(token, genConfig);
    this.curRoundCompletionTotalTokens++;
  }

  /** The model: the next token's logits given the cache. */
  protected logits(cache: readonly number[]): Float32Array {
    return nextLogits(cache);
  }

  private greedy(): number {
    return argmax(this.logits(this.kv));
  }

  prefill(prompt: number[], version: WebLLMVersion): void {
    this.kv.push(...prompt);
    this.forwards++;
    this.filledKVCacheLength = prompt.length;
    this.commit(this.greedy(), version);
  }

  /** WebLLM's decode step, at temperature 0. */
  async plainDecode(version: WebLLMVersion): Promise<void> {
    this.kv.push(this.outputIds.at(-1)!);
    this.forwards++;
    clock.ms += 55;
    this.filledKVCacheLength++;
    this.curRoundDecodingTotalTokens++;
    this.commit(this.greedy(), version);
  }

  private commit(token: number, version: WebLLMVersion): void {
    if (version.commitToken === 'commit-sampled') this.commitSampledToken(token, this.genConfig);
    else this.processNextToken(token, this.genConfig);
  }

  get genConfig(): GenConfig {
    return { temperature: 0, max_tokens: this.maxTokens };
  }
}

const PROMPT = [3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7, 9, 3, 2, 3, 8, 4];

async function writePlain(version: WebLLMVersion, window: number, maxTokens: number): Promise<StandInPipeline> {
  const p = new StandInPipeline(window, maxTokens);
  p.prefill(PROMPT, version);
  while (!p.stopTriggered) await p.plainDecode(version);
  return p;
}

async function writeSpeculative(
  version: WebLLMVersion,
  window: number,
  maxTokens: number,
  plan: SpeculationPlan,
): Promise<{ p: StandInPipeline; decoder: SpeculativeDecoder }> {
  const p = new StandInPipeline(window, maxTokens);
  const decoder = new SpeculativeDecoder(version, PROMPT.join(' '), plan, Math.random);
  p.prefill(PROMPT, version);
  while (!p.stopTriggered) await decoder.decode(p, p.genConfig, () => p.plainDecode(version));
  return { p, decoder };
}

const VERSIONS = [WEBLLM_0_2_79, WEBLLM_0_2_86];

describe.each(VERSIONS)('speculative decoding against a stand-in pipeline, WebLLM $version', (version) => {
  const cases: [string, (plain: readonly number[]) => SpeculationPlan][] = [
    ['all right (the plain reply as the draft)', (plain) => ({ maxDraft: 4, maxNgram: 4, draft: (w) => plain.slice(w.length, w.length + 4) })],
    ['all wrong', (plain) => ({ maxDraft: 4, maxNgram: 4, draft: (w) => plain.slice(w.length, w.length + 4).map((t) => (t + 1) % (VOCAB - 1)) })],
    [
      'right for a prefix',
      (plain) => ({ maxDraft: 5, maxNgram: 4, draft: (w) => plain.slice(w.length, w.length + 5).map((t, i) => (i < 2 ? t : (t + 3) % (VOCAB - 1))) }),
    ],
    ['drafted by prompt lookup', () => ({ maxDraft: 8, maxNgram: 4 })],
  ];

  it.each(cases)('writes the plain reply token for token, and leaves the cache as plain decoding does, with drafts %s', async (_, planOf) => {
    const plain = await writePlain(version, 4096, 40);
    expect(plain.finishReason).toBe('stop');
    const { p, decoder } = await writeSpeculative(version, 4096, 40, planOf(plain.outputIds));
    expect(p.outputIds).toEqual(plain.outputIds);
    expect(p.kv).toEqual(plain.kv);
    expect(p.filledKVCacheLength).toBe(plain.filledKVCacheLength);
    expect(p.finishReason).toBe(plain.finishReason);
    expect([...p.appearedTokensFreq]).toEqual([...plain.appearedTokensFreq]);
    // Usage counts every token written after the prefill, as plain decoding does.
    expect(p.curRoundDecodingTotalTokens).toBe(plain.curRoundDecodingTotalTokens);
    expect(p.curRoundCompletionTotalTokens).toBe(plain.curRoundCompletionTotalTokens);
    expect(decoder.stats.passes).toBe(p.forwards - 1);
    expect(decoder.stats.accepted).toBeLessThanOrEqual(decoder.stats.drafted);
  });

  it('takes fewer passes than tokens when the drafts are right, and keeps none of a wrong draft', async () => {
    const plain = await writePlain(version, 4096, 40);
    const right = await writeSpeculative(version, 4096, 40, cases[0]![1](plain.outputIds));
    expect(right.decoder.stats.passes).toBeLessThan(plain.outputIds.length / 2);
    expect(right.decoder.stats.accepted).toBe(right.decoder.stats.drafted);
    const wrong = await writeSpeculative(version, 4096, 40, cases[1]![1](plain.outputIds));
    expect(wrong.decoder.stats.accepted).toBe(0);
    expect(wrong.decoder.stats.passes).toBe(plain.outputIds.length);
  });

  it('stops at max_tokens inside an accepted draft, exactly where plain decoding stops', async () => {
    const plain = await writePlain(version, 4096, 7);
    expect(plain.finishReason).toBe('length');
    const { p } = await writeSpeculative(version, 4096, 7, { maxDraft: 8, maxNgram: 4, draft: () => [] });
    expect(p.outputIds).toEqual(plain.outputIds);
    const oracle = await writeSpeculative(version, 4096, 7, cases[0]![1]((await writePlain(version, 4096, 40)).outputIds));
    expect(oracle.p.outputIds).toEqual(plain.outputIds);
    expect(oracle.p.kv).toEqual(plain.kv);
  });

  it('stops at the end of the context window where plain decoding does, never drafting past it', async () => {
    const window = PROMPT.length + 5; // the first pass (K = 4) ends exactly at the window
    const plain = await writePlain(version, window, 40);
    expect(plain.finishReason).toBe('length');
    const long = await writePlain(version, 4096, 40);
    const { p } = await writeSpeculative(version, window, 40, cases[0]![1](long.outputIds));
    expect(p.outputIds).toEqual(plain.outputIds);
    expect(p.kv).toEqual(plain.kv);
    expect(p.kv.length).toBeLessThanOrEqual(window);
  });

  it('writes with WebLLM’s own step where the model library has no batch_verify', async () => {
    const p = new StandInPipeline(4096, 10);
    p.vm.getFunction = (name: string) => {
      throw new Error(`Cannot find function ${name}`);
    };
    const decoder = new SpeculativeDecoder(version, PROMPT.join(' '), { maxDraft: 4, maxNgram: 4 }, Math.random);
    p.prefill(PROMPT, version);
    let plainSteps = 0;
    while (!p.stopTriggered) await decoder.decode(p, p.genConfig, () => (plainSteps++, p.plainDecode(version)));
    expect(plainSteps).toBe(decoder.stats.passes);
    expect(decoder.stats.drafted).toBe(0);
  });
});

/** A stand-in that counts on, 0 to 9 and round again, never stopping: prompt lookup in a prompt that counts so drafts it right every time. */
class CountingPipeline extends StandInPipeline {
  protected override logits(cache: readonly number[]): Float32Array {
    const row = new Float32Array(VOCAB).fill(-4);
    row[(cache.at(-1)! + 1) % 10] = 4;
    return row;
  }
}

const COUNTING = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9];
/** The most prompt lookup drafts there: the tokens since the tail's last occurrence, one count round. */
const ROUND = 10;

/** One request with `plan` against the counting stand-in; the drafted length of each verify pass, as its tuner saw them. */
async function writeCounting(version: WebLLMVersion, maxTokens: number, plan: SpeculationPlan): Promise<{ p: StandInPipeline; drafted: number[] }> {
  const p = new CountingPipeline(4096, maxTokens);
  const drafted: number[] = [];
  const observe = plan.tuner!.observePass.bind(plan.tuner);
  plan.tuner!.observePass = (pass) => (drafted.push(pass.drafted), observe(pass));
  const decoder = new SpeculativeDecoder(version, COUNTING.join(' '), plan, Math.random);
  p.prefill(COUNTING, version);
  while (!p.stopTriggered) await decoder.decode(p, p.genConfig, () => p.plainDecode(version));
  plan.tuner!.observePass = observe;
  return { p, drafted };
}

describe.each(VERSIONS)('the draft length chosen from measurements, WebLLM $version', (version) => {
  beforeEach(() => void vi.spyOn(performance, 'now').mockImplementation(() => clock.ms));
  afterEach(() => void vi.restoreAllMocks());

  it('drafts more than the first K when every drafted token is kept, choosing the cap, and writes what plain decoding does', async () => {
    const plan = adaptivePlan();
    const first = plan.tuner!.next(plan.maxDraft);
    const { p, drafted } = await writeCounting(version, 200, plan);
    expect(p.outputIds).toEqual(Array.from({ length: 200 }, (_, i) => i % 10));
    expect(drafted[0]).toBe(first);
    expect(Math.max(...drafted)).toBeGreaterThan(first);
    // As much as the lookup finds, but for the last pass, which the reply's cap cuts short.
    expect(drafted.slice(-5, -1)).toEqual([ROUND, ROUND, ROUND, ROUND]);
    expect(plan.tuner!.next(plan.maxDraft)).toBe(plan.maxDraft);
    // The stand-in's clock gave the verify passes their H200 cost, at several draft lengths.
    expect(plan.tuner!.cost().perToken / plan.tuner!.cost().base).toBeCloseTo(2.5 / 115, 6);
  });

  it('learns across requests that share a plan: the second starts from what the first measured', async () => {
    const plan = adaptivePlan();
    const first = plan.tuner!.next(plan.maxDraft);
    const one = await writeCounting(version, 60, plan);
    const seen = plan.tuner!.estimate().verifyPasses;
    expect(seen).toBe(one.drafted.length);
    const learnt = plan.tuner!.next(plan.maxDraft);
    expect(learnt).toBeGreaterThan(first);
    const two = await writeCounting(version, 60, plan);
    expect(two.drafted[0]).toBe(Math.min(learnt, ROUND));
    expect(plan.tuner!.estimate().verifyPasses).toBe(seen + two.drafted.length);
    // A plan of its own starts again from the prior.
    expect((await writeCounting(version, 60, adaptivePlan())).drafted[0]).toBe(first);
  });

  it('drafts fewer when the drafts are wrong, and times the plain steps where nothing is drafted', async () => {
    const tuner = new DraftLength();
    const first = tuner.next(MAX_DRAFT);
    // Never the token plain decoding writes next: every draft is rejected at its first token.
    const plain = (await writePlain(version, 4096, 40)).outputIds;
    const draft = (w: readonly number[]) => Array.from({ length: MAX_DRAFT }, (_, i) => ((plain[w.length + i] ?? 0) + 1) % (VOCAB - 1));
    const { decoder } = await writeSpeculative(version, 4096, 40, { maxDraft: MAX_DRAFT, maxNgram: 4, tuner, draft });
    expect(decoder.stats.accepted).toBe(0);
    expect(tuner.next(MAX_DRAFT)).toBeLessThan(first);
    const none = new DraftLength();
    await writeSpeculative(version, 4096, 10, { maxDraft: MAX_DRAFT, maxNgram: 4, tuner: none, draft: () => [] });
    expect(none.estimate()).toMatchObject({ verifyPasses: 0, decodeSteps: 9 });
    expect(none.estimate().decode).toBeCloseTo(0.055, 9);
  });

  it('keeps K fixed where the plan has no tuner', async () => {
    const plan: SpeculationPlan = { maxDraft: 3, maxNgram: 4 };
    const p = new CountingPipeline(4096, 40);
    const decoder = new SpeculativeDecoder(version, COUNTING.join(' '), plan, Math.random);
    p.prefill(COUNTING, version);
    while (!p.stopTriggered) await decoder.decode(p, p.genConfig, () => p.plainDecode(version));
    expect(decoder.stats.drafted).toBe(3 * (decoder.stats.passes - 1) + 2); // the last pass has room for 2
  });
});
