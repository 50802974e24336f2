import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { DraftLength, MAX_DRAFT } from '../src/core/draft-length';
import type { GenerateResult } from '../src/core/generation';
import { samplingDistribution } from '../src/core/speculative';
import { type BatchItem, writeBatch } from '../src/engines/webllm/driver/batch-writer';
import type { BatchModel, SequenceTokens, SequenceWriter } from '../src/engines/webllm/driver/batch-model';
import { adaptivePlan, fixedPlan, type SpeculationPlan } from '../src/engines/webllm/driver/speculate';

const VOCAB = 12;

/**
 * The stand-in clock, in milliseconds, read in place of performance.now: a
 * decode pass of w sequences takes 55 ms + 2.5 ms a sequence past the first,
 * a verify or prefill pass over w tokens 115 ms + 2.5 ms a token past the
 * first (the H200's shape), and sampling a row SAMPLE ms.
 */
const clock = { ms: 0 };
const SAMPLE = 1.5;
const passMs = (kind: string, width: number) => (kind === 'decode' ? 55 : 115) + 2.5 * (width - 1);

/** The stand-in model counts on, 0 to 9 and round again: a prompt that counts holds every token it writes. */
function nextLogits(cache: readonly number[]): Float32Array {
  const row = new Float32Array(VOCAB).fill(-4);
  row[(cache.at(-1)! + 1) % 10] = 4;
  return row;
}

/** A request's writing state at temperature 0: its cap ends it; sampling a row takes SAMPLE ms on the clock. */
function writer(maxTokens: number): SequenceWriter {
  const ids: number[] = [];
  return {
    written: () => ids,
    text: () => ids.join(' '),
    stopped: () => ids.length >= maxTokens,
    finishReason: () => 'length',
    distribution: (row) => ((clock.ms += SAMPLE), samplingDistribution(row, { temperature: 0, topP: 1 })),
    commit: (token) => (ids.push(token), ids.length < maxTokens),
  };
}

interface Pass {
  kind: string;
  width: number;
  at: number;
}

/** A fake of the batched kernels over caches of token ids, on the stand-in clock; the passes it ran. */
function countingModel(prompts: number[][], caps: readonly number[]): { model: BatchModel; passes: Pass[] } {
  const passes: Pass[] = [];
  const model: BatchModel = {
    chunk: 256,
    window: 4096,
    prepare: async (i) => ({ prompt: prompts[i]!, writer: writer(caps[i]!) }),
    open: (capacities) => {
      const caches = capacities.map(() => [] as number[]);
      const run = (kind: string, parts: readonly SequenceTokens[]) => {
        const width = kind === 'decode' ? parts.length : parts.reduce((n, p) => n + p.tokens.length, 0);
        passes.push({ kind, width, at: clock.ms });
        clock.ms += passMs(kind, width);
        return parts.map((p) => p.tokens.map((t) => (caches[p.seq]!.push(t), nextLogits(caches[p.seq]!))));
      };
      return {
        prefill: async (parts) => run('prefill', parts).map((rows) => rows.at(-1)!),
        decode: async (parts) => run('decode', parts).map((rows) => rows[0]!),
        verify: async (parts) => run('verify', parts),
        popn: (seq, n) => void caches[seq]!.splice(caches[seq]!.length - n, n),
        remove: () => undefined,
        dispose: () => undefined,
      };
    },
  };
  return { model, passes };
}

const PROMPTS = [
  [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
  [3, 4, 5, 6, 7, 8, 9, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 2],
];
const TOKENS = 100;

/** Both prompts' requests written in one batch, each with its plan (none: plain decoding) and cap; the clock's milliseconds it took. */
async function write(plans: (SpeculationPlan | undefined)[], caps = [TOKENS, TOKENS]) {
  const { model, passes: log } = countingModel(PROMPTS, caps);
  const items: BatchItem[] = plans.map((plan, i) => ({ options: { maxTokens: caps[i]!, temperature: 0 }, ...(plan && { plan }) }));
  const start = clock.ms;
  const out = await writeBatch(model, items);
  return { ...out, log, ms: clock.ms - start, end: clock.ms };
}

const value = (r: PromiseSettledResult<GenerateResult> | undefined) => (r?.status === 'fulfilled' ? r.value : undefined);
/** Drafts wrong at their first token: the model writes one more than the last token, these two more. */
const wrongDraft = (w: readonly number[]) => Array.from({ length: MAX_DRAFT }, (_, i) => (w.at(-1)! + 2 + i) % 10);

describe('speculation inside a batch, on a stand-in clock', () => {
  beforeEach(() => void vi.spyOn(performance, 'now').mockImplementation(() => clock.ms));
  afterEach(() => void vi.restoreAllMocks());

  it('leaves plain decoding once members copy their prompts, in far fewer passes than tokens and faster than plain', async () => {
    const plain = await write([undefined, undefined]);
    const tuners = [new DraftLength(), new DraftLength()];
    const out = await write(tuners.map((t) => adaptivePlan(t)));
    expect(out.tokens).toEqual(plain.tokens);
    // Both tuners start at K = 0: the first pass decodes, and the drafts compared with it move K off 0.
    expect(out.log.filter((p) => p.kind !== 'prefill')[0]!.kind).toBe('decode');
    expect(out.drafted).toBeGreaterThan(0);
    expect(out.kept).toBe(out.drafted);
    expect(out.passes.write).toBeLessThan(TOKENS / 4);
    expect(plain.passes.write).toBe(TOKENS - 1);
    expect(out.ms).toBeLessThan(plain.ms * 1.05);
    expect(out.ms).toBeLessThan(plain.ms / 2);
    // The batch's counts are its members' summed.
    const members = out.results.map((r) => value(r)!.usage.writing!);
    expect(members.reduce((n, w) => n + w.drafted, 0)).toBe(out.drafted);
    expect(members.every((w) => w.drafted > 0)).toBe(true);
  });

  it('returns to plain decoding when every draft is wrong, and stays within 5 % of plain decoding’s time', async () => {
    const plain = await write([undefined, undefined]);
    // Tuners that expect 90 % of drafted tokens kept: the batch drafts at once.
    const tuners = [new DraftLength({ priorKept: 0.9 }), new DraftLength({ priorKept: 0.9 })];
    const out = await write(tuners.map((t) => adaptivePlan(t, wrongDraft)));
    expect(out.tokens).toEqual(plain.tokens);
    const writing = out.log.filter((p) => p.kind !== 'prefill');
    expect(writing[0]!.kind).toBe('verify');
    expect(out.drafted).toBeGreaterThan(0);
    expect(out.kept).toBe(0);
    // Back at K = 0 within a few passes, and there for the rest of the reply.
    const lastVerify = writing.map((p) => p.kind).lastIndexOf('verify');
    expect(lastVerify).toBeLessThan(5);
    for (const t of tuners) expect(t.next()).toBe(0);
    expect(out.ms).toBeLessThanOrEqual(plain.ms * 1.05);
  });

  it('lets a member with nothing worth drafting ride along a verify pass without taking its time for a decode step’s', async () => {
    // Its tuner expects 1 % of drafted tokens kept, and its drafts are never right: it drafts nothing.
    const rider = new DraftLength({ priorKept: 0.01 });
    // The first member drafts 8 tokens every pass (a fixed K): every pass is a verify pass while it writes.
    const out = await write([fixedPlan(8), adaptivePlan(rider, wrongDraft)]);
    const verify = out.log.filter((p) => p.kind === 'verify');
    const decode = out.log.filter((p) => p.kind === 'decode');
    expect(verify.length).toBeGreaterThan(5);
    expect(value(out.results[1])?.usage.writing?.drafted).toBe(0);
    // Its decode steps are the decode passes written once the first member had its reply, alone.
    expect(decode.every((p) => p.width === 1)).toBe(true);
    expect(rider.estimate().decodeSteps).toBe(decode.length);
    expect(rider.decodeCost()).toBeCloseTo((passMs('decode', 1) + SAMPLE) / 1000, 9);
    // It still compared its drafts with the tokens it wrote, as a plain step does alone.
    expect(rider.estimate().shadowPasses).toBeGreaterThan(0);
    expect(rider.next()).toBe(0);
  });

  it('drafts nothing for a member that copies while one whose drafts are wrong has as far to go: the batch ends when that one does', async () => {
    const plain = await write([undefined, undefined]);
    const out = await write([adaptivePlan(new DraftLength()), adaptivePlan(new DraftLength(), wrongDraft)]);
    expect(out.tokens).toEqual(plain.tokens);
    expect(out.drafted).toBeLessThan(10);
    expect(out.ms).toBeLessThanOrEqual(plain.ms * 1.05);
  });

  it('drafts for a member that copies and has further to go than one whose drafts are wrong, faster than plain', async () => {
    const caps = [TOKENS, 30];
    const plain = await write([undefined, undefined], caps);
    const out = await write([adaptivePlan(new DraftLength()), adaptivePlan(new DraftLength(), wrongDraft)], caps);
    expect(out.tokens).toEqual(plain.tokens);
    // The copying one writes its 100 tokens in the passes the other's 30 take.
    const copied = value(out.results[0])!.usage.writing!;
    expect(copied.accepted).toBeGreaterThan(TOKENS / 2);
    expect(copied.passes).toBeLessThanOrEqual(30);
    expect(out.ms).toBeLessThan(plain.ms * 0.8);
  });

  it('starts from the pass costs its members’ tuners measured', async () => {
    const firstPass = async (options: ConstructorParameters<typeof DraftLength>[0]) => {
      const out = await write([adaptivePlan(new DraftLength(options)), adaptivePlan(new DraftLength(options))]);
      return out.log.find((p) => p.kind !== 'prefill')!.kind;
    };
    // 60 % kept: at the H200's costs a plain pass writes faster; where a verify pass costs 50 ms and a drafted token 0.1 ms, a draft does.
    expect(await firstPass({ priorKept: 0.6 })).toBe('decode');
    expect(await firstPass({ priorKept: 0.6, priorCost: { base: 0.05, perToken: 0.0001 } })).toBe('verify');
  });

  it('times a pass from its forward to the last member’s tokens sampled, on decode and verify passes alike', async () => {
    const cases: [string, (SpeculationPlan | undefined)[]][] = [
      ['decode', [undefined, undefined]],
      ['verify', [fixedPlan(4), fixedPlan(4)]],
    ];
    for (const [kind, plans] of cases) {
      const out = await write(plans);
      const writing = out.log.filter((p) => p.kind !== 'prefill');
      expect(writing.every((p) => p.kind === kind)).toBe(true);
      // Both members write to the end: their decode time is every writing pass's, sampling included.
      const seconds = (out.end - writing[0]!.at) / 1000;
      for (const r of out.results) expect(value(r)!.usage.decodeTokensPerSecond).toBeCloseTo((TOKENS - 1) / seconds, 9);
    }
    // A tuner's plain steps: the pass's forward and both rows sampled.
    const tuner = new DraftLength();
    await write([adaptivePlan(tuner, () => []), undefined]);
    expect(tuner.estimate().decodeSteps).toBe(TOKENS - 1);
    expect(tuner.decodeCost()).toBeCloseTo((passMs('decode', 2) + 2 * SAMPLE) / 1000, 9);
  });
});
