import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { DraftLength, MAX_DRAFT } from '../src/core/draft-length';
import { argmax } from '../src/core/speculative';
import { adaptivePlan, SpeculativeDecoder, type SpeculationPlan } from '../src/engines/webllm/driver/speculate';
import type { GenConfig, Logits, Packed, Tensor, VerifyPipeline, WritingDriver } from '../src/engines/webllm/driver/driver';
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
async function writeCounting(
  version: WebLLMVersion,
  maxTokens: number,
  plan: SpeculationPlan,
): Promise<{ p: StandInPipeline; drafted: number[]; plainSteps: number }> {
  const p = new CountingPipeline(4096, maxTokens);
  const drafted: number[] = [];
  const observe = plan.tuner!.observePass.bind(plan.tuner);
  plan.tuner!.observePass = (pass) => (drafted.push(pass.drafted), observe(pass));
  const decoder = new SpeculativeDecoder(version, COUNTING.join(' '), plan, Math.random);
  p.prefill(COUNTING, version);
  let plainSteps = 0;
  while (!p.stopTriggered) await decoder.decode(p, p.genConfig, () => (plainSteps++, p.plainDecode(version)));
  decoder.end();
  plan.tuner!.observePass = observe;
  return { p, drafted, plainSteps };
}

describe.each(VERSIONS)('the draft length chosen from measurements, WebLLM $version', (version) => {
  beforeEach(() => void vi.spyOn(performance, 'now').mockImplementation(() => clock.ms));
  afterEach(() => void vi.restoreAllMocks());

  it('starts with plain steps, drafts once the lookup proves right, grows to the most the lookup finds, and writes what plain decoding does', async () => {
    const plan = adaptivePlan();
    expect(plan.tuner!.next(plan.maxDraft)).toBe(0);
    const { p, drafted } = await writeCounting(version, 200, plan);
    expect(p.outputIds).toEqual(Array.from({ length: 200 }, (_, i) => i % 10));
    expect(drafted.length).toBeGreaterThan(0);
    // As much as the lookup finds, but for the last pass, which the reply's cap cuts short.
    expect(drafted.slice(-5, -1)).toEqual([ROUND, ROUND, ROUND, ROUND]);
    expect(plan.tuner!.next(plan.maxDraft)).toBeGreaterThan(ROUND);
    // The stand-in's clock gave the verify passes their H200 cost, at several draft lengths.
    expect(plan.tuner!.cost().perToken / plan.tuner!.cost().base).toBeCloseTo(2.5 / 115, 6);
  });

  it('learns across the requests of a run: the second drafts from its first step, where a fresh tuner starts plain', async () => {
    const plan = adaptivePlan();
    await writeCounting(version, 60, plan);
    const two = await writeCounting(version, 60, plan);
    expect(two.plainSteps).toBe(0);
    const fresh = await writeCounting(version, 60, adaptivePlan());
    expect(fresh.plainSteps).toBeGreaterThan(0);
  });

  it('goes back to plain decoding when the drafts are wrong, and times the plain steps', async () => {
    const tuner = new DraftLength();
    // Never the token plain decoding writes next: every draft is wrong at its first token.
    const plain = (await writePlain(version, 4096, 40)).outputIds;
    const draft = (w: readonly number[]) => Array.from({ length: MAX_DRAFT }, (_, i) => ((plain[w.length + i] ?? 0) + 1) % (VOCAB - 1));
    const { p, decoder } = await writeSpeculative(version, 4096, 40, { maxDraft: MAX_DRAFT, maxNgram: 4, tuner, draft });
    expect(p.outputIds).toEqual(plain);
    expect(decoder.stats.drafted).toBe(0); // compared with plain decoding only: no pass paid for them
    expect(tuner.next(MAX_DRAFT)).toBe(0);
    expect(tuner.estimate()).toMatchObject({ verifyPasses: 0, decodeSteps: plain.length }); // the last step wrote the stop token
    expect(tuner.estimate().shadowPasses).toBeGreaterThan(0);
    expect(tuner.estimate().decode).toBeCloseTo(0.055, 9);
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

/** Where a verify pass can fail: each step of the forward, the sampling, and the commit of a written token. */
const FAULTS = ['embeddings', 'begin', 'verify', 'end', 'sync', 'sampling', 'commit'] as const;

/** A stand-in that throws once, at `fault`, in the first verify pass. */
class FaultyPipeline extends StandInPipeline {
  armed = true;
  constructor(
    private readonly fault: (typeof FAULTS)[number],
    window: number,
    maxTokens: number,
  ) {
    super(window, maxTokens);
    const at = (name: (typeof FAULTS)[number]) => {
      if (this.armed && this.fault === name) {
        this.armed = false;
        throw new Error(`fault at ${name}`);
      }
    };
    const verify = this.vm.getFunction.bind(this.vm);
    this.vm.getFunction = (name: string) => {
      const f = verify(name);
      const wrapped = (...args: unknown[]) => {
        // The paged cache grew at begin_forward: a forward that fails leaves the tokens in it.
        if (this.armed && this.fault === 'verify') this.kv.push(...(args[0] as FakeTensor).data);
        at('verify');
        return f(...args);
      };
      this.tvm.detachFromCurrentScope(f);
      this.scopes.at(-1)?.push(wrapped);
      return wrapped as Packed;
    };
    this.fKVCacheBeginForward = (() => at('begin')) as Packed;
    this.fKVCacheEndForward = (() => at('end')) as Packed;
    this.device = { sync: async () => void at('sync') };
    const embed = this.getTokensEmbeddings.bind(this);
    this.getTokensEmbeddings = (tokens: number[]) => (at('embeddings'), embed(tokens));
    this.sampling = () => at('sampling');
    const commit = this.processNextToken.bind(this);
    this.processNextToken = (token, genConfig) => (this.inPass ? at('commit') : undefined, commit(token, genConfig));
  }
  inPass = false;
  private sampling: () => void = () => undefined;

  /** The request's config, whose temperature the pass's sampling reads. */
  override get genConfig(): GenConfig {
    const config = { max_tokens: this.maxTokens };
    const read = () => {
      if (this.inPass) this.sampling();
      return 0;
    };
    return Object.defineProperty(config, 'temperature', { get: read, enumerable: true }) as GenConfig;
  }
}

describe.each(VERSIONS)('a verify pass that throws, WebLLM $version', (version) => {
  it.each(FAULTS)('at %s leaves the cache and WebLLM’s count as plain decoding would have them', async (fault) => {
    const plainReply = (await writePlain(version, 4096, 40)).outputIds;
    const p = new FaultyPipeline(fault, 4096, 40);
    const decoder = new SpeculativeDecoder(
      version,
      PROMPT.join(' '),
      { maxDraft: 4, maxNgram: 4, draft: (w) => plainReply.slice(w.length, w.length + 4) },
      Math.random,
    );
    p.prefill(PROMPT, version);
    const before = { kv: [...p.kv], filled: p.filledKVCacheLength, reply: [...p.outputIds] };
    p.inPass = true;
    const failed = await decoder.decode(p, p.genConfig, () => p.plainDecode(version)).catch((e: unknown) => e);
    p.inPass = false;
    expect(failed).toMatchObject({ message: `fault at ${fault}` });
    expect(p.filledKVCacheLength).toBe(p.kv.length);
    expect(p.outputIds).toEqual(before.reply);
    if (fault === 'commit') {
      // Plain decoding fails there too with the last written token in the cache (it ran to decide the next), and its request ends.
      expect(p.kv).toEqual([...before.kv, before.reply.at(-1)]);
      return;
    }
    expect(p.kv).toEqual(before.kv);
    // Nothing was written: the reply goes on from there as plain decoding writes it.
    while (!p.stopTriggered) await decoder.decode(p, p.genConfig, () => p.plainDecode(version));
    expect(p.outputIds).toEqual(plainReply);
  });
});

describe('a verify pass whose cache cannot be popped back after it throws', () => {
  // In the forward (driver.ts pops it) and after it, in the sampling (speculate.ts truncates).
  it.each(['sync', 'sampling'] as const)('at %s throws its own failure, not the pop’s, and logs the pop’s', async (fault) => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    const p = new FaultyPipeline(fault, 4096, 40);
    const decoder = new SpeculativeDecoder(WEBLLM_0_2_86, PROMPT.join(' '), { maxDraft: 4, maxNgram: 4, draft: () => [1, 2, 3] }, Math.random);
    p.prefill(PROMPT, WEBLLM_0_2_86);
    p.kv.splice = () => {
      throw new Error('the cache cannot be popped');
    };
    p.inPass = true;
    const failed = await decoder.decode(p, p.genConfig, () => p.plainDecode(WEBLLM_0_2_86)).catch((e: unknown) => e);
    expect(failed).toMatchObject({ message: `fault at ${fault}` });
    expect(warn).toHaveBeenCalledWith(expect.stringMatching(/failed:$/), expect.objectContaining({ message: 'the cache cannot be popped' }));
    warn.mockRestore();
  });
});

/** A fake of the driver: a cache of token ids and a model that always writes `next(cache)`, greedy. */
function fakeDriver(
  next: (cache: readonly number[]) => number,
  prompt: number[],
  maxTokens: number,
): WritingDriver & { cache: number[]; reply: number[]; plainStep(): void } {
  const cache = [...prompt];
  const reply = [next(cache)];
  let stopped = false;
  const row = (token: number) => Float32Array.from({ length: VOCAB }, (_, t) => (t === token ? 1 : 0));
  const driver = {
    cache,
    reply,
    written: () => reply,
    stopped: () => stopped,
    verifiable: () => true,
    room: () => maxTokens - reply.length - 1,
    encode: (text: string) => text.split(' ').map(Number),
    forward: async (tokens: number[]): Promise<Logits> => {
      const logits = new Float32Array(tokens.length * VOCAB);
      tokens.forEach((t, i) => {
        cache.push(t);
        logits.set(row(next(cache)), i * VOCAB);
      });
      return { logits, vocab: VOCAB };
    },
    distribution: (r: Float32Array) => ({ ids: [argmax(r)], probs: [1] }),
    commit: (token: number) => {
      reply.push(token);
      stopped = reply.length >= maxTokens;
      return !stopped;
    },
    cached: () => cache.length,
    truncate: (length: number) => void cache.splice(length),
    countDecode: () => undefined,
    plainStep: () => {
      cache.push(reply.at(-1)!);
      driver.commit(next(cache));
    },
  };
  return driver;
}

describe('speculation over a fake of the driver', () => {
  const counting = (cache: readonly number[]) => (cache.at(-1)! + 1) % 10;

  it('writes what plain steps write, truncating the cache after each pass to what plain decoding holds', async () => {
    const driver = fakeDriver(counting, COUNTING, 30);
    const decoder = new SpeculativeDecoder(WEBLLM_0_2_86, COUNTING.join(' '), { maxDraft: 6, maxNgram: 4 }, Math.random);
    while (!driver.stopped()) await decoder.step(driver, async () => driver.plainStep());
    expect(driver.reply).toEqual(Array.from({ length: 30 }, (_, i) => i % 10));
    expect(driver.cache).toEqual([...COUNTING, ...driver.reply.slice(0, -1)]);
    expect(decoder.stats.passes).toBeLessThan(30 / 2);
  });

  it('takes a plain step, and drafts nothing, where the tuner chooses K = 0', async () => {
    const driver = fakeDriver(counting, COUNTING, 5);
    const tuner = new DraftLength();
    const decoder = new SpeculativeDecoder(WEBLLM_0_2_86, COUNTING.join(' '), adaptivePlan(tuner), Math.random);
    let plain = 0;
    await decoder.step(driver, async () => (plain++, driver.plainStep()));
    expect(plain).toBe(1);
    expect(decoder.stats).toEqual({ passes: 1, drafted: 0, accepted: 0 });
    expect(tuner.shadowing).toBe(true); // the draft it did not pay for is compared with what plain decoding wrote
  });

  it('asks the tuner for the best K that fits the room left: plain decoding where a short pass is slower, though a long one would be faster', async () => {
    // Stand-in costs: a pass costs 200 ms and 1 ms a token, a plain step 55 ms; 95% of drafted tokens are kept.
    const tuner = new DraftLength({ priorKept: 0.95, priorCost: { base: 0.2, perToken: 0.001 }, priorDecode: 0.055 });
    expect(tuner.next(MAX_DRAFT)).toBeGreaterThan(2);
    expect(tuner.next(2)).toBe(0);
    // Room for 2 drafted tokens: the cap of 4 tokens, one written, one more than it keeps.
    const driver = fakeDriver(counting, COUNTING, 4);
    expect(driver.room()).toBe(2);
    const decoder = new SpeculativeDecoder(WEBLLM_0_2_86, COUNTING.join(' '), adaptivePlan(tuner), Math.random);
    let plain = 0;
    await decoder.step(driver, async () => (plain++, driver.plainStep()));
    expect(plain).toBe(1);
    expect(decoder.stats.drafted).toBe(0);
  });

  it('truncates the cache back when the sampling throws, and lets the error through', async () => {
    const driver = fakeDriver(counting, COUNTING, 30);
    const before = driver.cached();
    driver.distribution = () => {
      throw new Error('no sampling');
    };
    const decoder = new SpeculativeDecoder(WEBLLM_0_2_86, COUNTING.join(' '), { maxDraft: 6, maxNgram: 4 }, Math.random);
    await expect(decoder.step(driver, async () => driver.plainStep())).rejects.toThrow('no sampling');
    expect(driver.cached()).toBe(before);
  });
});
