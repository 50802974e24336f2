import { describe, expect, it, vi } from 'vitest';
import type { GenerateOptions, GenerateResult } from '../src/core/generation';
import { samplingDistribution } from '../src/core/speculative';
import { type BatchItem, writeBatch } from '../src/engines/webllm/driver/batch-writer';
import type { BatchKernels, BatchModel, SequenceTokens, SequenceWriter } from '../src/engines/webllm/driver/batch-model';
import { adaptivePlan, fixedPlan } from '../src/engines/webllm/driver/speculate';
import { DraftLength } from '../src/core/draft-length';

const VOCAB = 12;
const STOP = 11;

/** The stand-in model: the next token depends on a sequence's last two cached tokens and its length, so a cache left wrong shows. */
function nextLogits(cache: readonly number[]): Float32Array {
  const row = new Float32Array(VOCAB);
  const top = (cache.at(-1)! * 3 + (cache.at(-2) ?? 0) * 5 + cache.length) % (VOCAB - 1);
  for (let t = 0; t < VOCAB; t++) row[t] = -Math.abs(t - top) / 2;
  row[top] = 1;
  return row;
}

/** A request's writing state with WebLLM's rules in small: a stop token, max_tokens, a text of one letter a token. */
function writer(options: GenerateOptions, sampling: { temperature: number; topP: number }): SequenceWriter {
  const ids: number[] = [];
  let stopped = false;
  let reason: 'stop' | 'length' = 'stop';
  return {
    written: () => ids,
    text: () => ids.map((t) => String.fromCharCode(97 + t)).join(''),
    stopped: () => stopped,
    finishReason: () => reason,
    distribution: (row) => samplingDistribution(row, sampling),
    commit: (token) => {
      if (token === STOP) stopped = true;
      else ids.push(token);
      if (ids.length >= options.maxTokens) [stopped, reason] = [true, 'length'];
      return !stopped;
    },
  };
}

interface Log {
  passes: { kind: string; seqs: number[]; tokens: number }[];
  popped: [number, number][];
  removed: number[];
  disposed: boolean;
  /** The sequences of each cache asked for. */
  opened: number[];
}

/** A fake model: a cache of token ids per sequence, prompts of the given token ids. */
function fakeModel(
  prompts: number[][],
  options: { chunk?: number; failPrepare?: number; failForward?: number; commitThrows?: number; popThrows?: boolean; mostSequences?: number } = {},
) {
  const log: Log = { passes: [], popped: [], removed: [], disposed: false, opened: [] };
  let items: readonly BatchItem[] = [];
  const model: BatchModel & { bind(i: readonly BatchItem[]): void } = {
    chunk: options.chunk ?? 64,
    window: 512,
    bind: (i) => (items = i),
    prepare: async (index) => {
      if (index === options.failPrepare) throw new Error('too long');
      const o = items[index]!.options;
      const w = writer(o, { temperature: o.temperature ?? 1, topP: o.topP ?? 1 });
      if (index === options.commitThrows) {
        const commit = w.commit;
        let n = 0;
        w.commit = (t, c) => {
          if (++n === 2) throw new Error('bad token');
          return commit(t, c);
        };
      }
      return { prompt: prompts[index]!, writer: w };
    },
    open: (capacities) => {
      log.opened.push(capacities.length);
      if (capacities.length > (options.mostSequences ?? Infinity)) throw new Error('Out of memory: the KV cache could not be allocated.');
      const caches = capacities.map(() => [] as number[]);
      const live = new Set(capacities.map((_, i) => i));
      const run = (kind: string, parts: readonly SequenceTokens[]) => {
        if (log.passes.length === options.failForward) throw new Error('device lost');
        log.passes.push({ kind, seqs: parts.map((p) => p.seq), tokens: parts.reduce((n, p) => n + p.tokens.length, 0) });
        expect(parts.reduce((n, p) => n + p.tokens.length, 0)).toBeLessThanOrEqual(model.chunk);
        return parts.map((p) => {
          expect(live.has(p.seq)).toBe(true);
          return p.tokens.map((t) => {
            caches[p.seq]!.push(t);
            return nextLogits(caches[p.seq]!);
          });
        });
      };
      const kernels: BatchKernels = {
        prefill: async (parts) => run('prefill', parts).map((rows) => rows.at(-1)!),
        decode: async (parts) => run('decode', parts).map((rows) => rows[0]!),
        verify: async (parts) => run('verify', parts),
        popn: (seq, n) => {
          if (options.popThrows) throw new Error('the sequence cannot be popped');
          log.popped.push([seq, n]);
          caches[seq]!.splice(caches[seq]!.length - n, n);
        },
        remove: (seq) => {
          live.delete(seq);
          log.removed.push(seq);
        },
        dispose: () => (log.disposed = true),
      };
      return kernels;
    },
  };
  return { model, log };
}

async function batch(prompts: number[][], items: BatchItem[], options: Parameters<typeof fakeModel>[1] = {}) {
  const { model, log } = fakeModel(prompts, options);
  model.bind(items);
  const out = await writeBatch(model, items);
  return { ...out, log };
}

const greedy = (maxTokens: number, more: Partial<GenerateOptions> = {}): BatchItem => ({ options: { maxTokens, temperature: 0, ...more } });
const PROMPTS = [
  [1, 2, 3, 4, 5],
  [6, 7],
  [8, 9, 10, 1, 2, 3, 4],
];
const fulfilled = (r: PromiseSettledResult<GenerateResult> | undefined) => (r?.status === 'fulfilled' ? r.value : undefined);

describe('writing several requests in one batch', () => {
  it('gives each request at temperature 0 the tokens it gets written alone', async () => {
    const alone = await Promise.all(PROMPTS.map((p, i) => batch([p], [greedy(6 + i)])));
    const together = await batch(PROMPTS, [greedy(6), greedy(7), greedy(8)]);
    expect(together.tokens).toEqual(alone.map((a) => a.tokens[0]));
    expect(together.results.every((r) => r.status === 'fulfilled')).toBe(true);
    // One prefill pass for all three prompts, then a pass per token for the longest reply.
    expect(together.passes.prefill).toBe(1);
    expect(together.log.passes[0]).toEqual({ kind: 'prefill', seqs: [0, 1, 2], tokens: 14 });
    expect(together.log.disposed).toBe(true);
  });

  it('packs prompts into prefill passes of at most a chunk, a long prompt split across passes', async () => {
    const alone = await batch([PROMPTS[2]!], [greedy(4)], { chunk: 4 });
    const out = await batch(PROMPTS, [greedy(4), greedy(4), greedy(4)], { chunk: 4 });
    expect(out.log.passes.filter((p) => p.kind === 'prefill').map((p) => p.seqs)).toEqual([[0], [0, 1, 2], [2], [2]]);
    expect(out.tokens[2]).toEqual(alone.tokens[0]);
  });

  it('lets a request that stops leave the batch and frees its sequence; the others write on', async () => {
    const alone = await batch([PROMPTS[0]!], [greedy(5)]);
    const out = await batch(PROMPTS.slice(0, 2), [greedy(5), greedy(2)]);
    expect(out.tokens[0]).toEqual(alone.tokens[0]);
    expect(out.tokens[1]).toHaveLength(2);
    expect(out.log.removed[0]).toBe(1);
    const decodes = out.log.passes.filter((p) => p.kind === 'decode').map((p) => p.seqs);
    expect(decodes).toEqual([[0, 1], [0], [0], [0]]);
    expect(fulfilled(out.results[1])).toMatchObject({ finishReason: 'length', usage: { promptTokens: 2, completionTokens: 2 } });
  });

  it('verifies every request’s draft in one pass and pops each one’s rejected tail from its own sequence', async () => {
    const alone = await batch(PROMPTS.slice(0, 2), [greedy(6), greedy(6)]);
    const [a, b] = alone.tokens as [number[], number[]];
    // The first request's draft is its reply (kept); the second's is right once, then wrong.
    const right = fixedPlan(3, (w) => a.slice(w.length));
    const wrong = fixedPlan(3, (w) => [b[w.length]!, (b[w.length + 1]! + 1) % STOP]);
    const out = await batch(PROMPTS.slice(0, 2), [
      { ...greedy(6), plan: right },
      { ...greedy(6), plan: wrong },
    ]);
    expect(out.tokens).toEqual([a, b]);
    expect(out.log.passes[1]).toEqual({ kind: 'verify', seqs: [0, 1], tokens: 7 });
    // The first pass: the second request kept one drafted token and wrote the true one in place of the other.
    expect(out.log.popped).toContainEqual([1, 1]);
    expect(out.log.popped.filter(([seq]) => seq === 0)).toEqual([]);
    expect(fulfilled(out.results[0])?.usage.writing).toMatchObject({ accepted: 3 });
    expect(fulfilled(out.results[1])?.usage.writing).toMatchObject({ accepted: 2 });
  });

  it('asks a request’s tuner for the best K that fits its room: plain decoding where a short pass is slower, though a long one would be faster', async () => {
    const { tokens } = await batch(PROMPTS.slice(0, 1), [greedy(3)]);
    // Stand-in costs: a pass costs 200 ms and 1 ms a token, a plain step 55 ms; 95% of drafted tokens are kept.
    const tuner = new DraftLength({ priorKept: 0.95, priorCost: { base: 0.2, perToken: 0.001 }, priorDecode: 0.055 });
    expect(tuner.next()).toBeGreaterThan(1);
    // A cap of 3 leaves room for one drafted token after the first (a pass writes one more than it keeps).
    const out = await batch(PROMPTS.slice(0, 1), [{ ...greedy(3), plan: adaptivePlan(tuner, (w) => tokens[0]!.slice(w.length)) }]);
    expect(out.tokens).toEqual(tokens);
    expect(out.log.passes.map((p) => p.kind)).not.toContain('verify');
  });

  it('fails only the request that fails, in its preparation or its writing; the others are written', async () => {
    const out = await batch(PROMPTS, [greedy(4), greedy(4), greedy(4)], { failPrepare: 0, commitThrows: 2 });
    expect(out.results.map((r) => r.status)).toEqual(['rejected', 'fulfilled', 'rejected']);
    expect(String((out.results[2] as PromiseRejectedResult).reason)).toMatch(/bad token/);
    expect(out.log.removed).toContain(1); // the failed one's sequence (its id in the batch) freed at once
    expect(out.tokens[1]).toHaveLength(4);
  });

  it('fails a request whose commit throws with that failure, not its sequence’s pop that fails after it, which is logged', async () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    const out = await batch(PROMPTS.slice(0, 2), [{ ...greedy(4), plan: fixedPlan(3, () => [1, 2, 3]) }, greedy(4)], { commitThrows: 0, popThrows: true });
    expect((out.results[0] as PromiseRejectedResult).reason).toMatchObject({ message: 'bad token' });
    expect(warn).toHaveBeenCalledWith(expect.stringMatching(/failed:$/), expect.objectContaining({ message: 'the sequence cannot be popped' }));
    warn.mockRestore();
  });

  it('takes an aborted request out of the batch and rejects it with an AbortError', async () => {
    const stop = new AbortController();
    stop.abort();
    const aborted = await batch(PROMPTS.slice(0, 2), [greedy(5, { signal: stop.signal }), greedy(5)]);
    expect((aborted.results[0] as PromiseRejectedResult).reason).toMatchObject({ name: 'AbortError' });
    const ctl = new AbortController();
    const during = await batch(PROMPTS.slice(0, 2), [greedy(5, { signal: ctl.signal, onToken: () => ctl.abort() }), greedy(5)]);
    expect((during.results[0] as PromiseRejectedResult).reason).toMatchObject({ name: 'AbortError' });
    expect(during.log.removed[0]).toBe(0);
    expect(during.tokens[1]).toHaveLength(5);
    expect(during.log.passes.filter((p) => p.kind === 'decode').every((p) => p.seqs.join() === '1')).toBe(true);
  });

  it('streams each request’s own text and samples with its own seed, the same seed the same reply', async () => {
    const pieces: string[] = [];
    const sampled = (seed: number, onToken?: (d: string) => void): BatchItem => ({
      options: { maxTokens: 8, temperature: 1, seed, ...(onToken && { onToken }) },
    });
    const one = await batch(PROMPTS.slice(0, 2), [sampled(7, (d) => pieces.push(d)), sampled(8)]);
    const again = await batch(PROMPTS.slice(0, 2), [sampled(7), sampled(8)]);
    expect(again.tokens).toEqual(one.tokens);
    expect(pieces.join('')).toBe(fulfilled(one.results[0])!.text);
    const other = await Promise.all([1, 2, 3, 4].map((s) => batch(PROMPTS.slice(0, 1), [sampled(s)])));
    expect(new Set(other.map((o) => o.tokens[0]!.join())).size).toBeGreaterThan(1);
  });

  it('writes the batch again in halves, down to one request, where its cache cannot be allocated, and says so', async () => {
    const alone = await batch(PROMPTS, [greedy(5), greedy(5), greedy(5)]);
    const halves = await batch(PROMPTS, [greedy(5), greedy(5), greedy(5)], { mostSequences: 2 });
    expect(halves.log.opened).toEqual([3, 2, 1]);
    expect(halves.tokens).toEqual(alone.tokens);
    expect(halves.results.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled']);
    expect(halves.split).toMatchObject({ asked: 3, size: 2, error: expect.objectContaining({ message: expect.stringMatching(/Out of memory/) }) });
    expect(alone.split).toBeUndefined();
    const ones = await batch(PROMPTS, [greedy(5), greedy(5), greedy(5)], { mostSequences: 1 });
    expect(ones.log.opened).toEqual([3, 2, 1, 1, 1]);
    expect(ones.tokens).toEqual(alone.tokens);
    expect(ones.split).toMatchObject({ asked: 3, size: 1 });
    const none = await batch(PROMPTS.slice(0, 2), [greedy(5), greedy(5)], { mostSequences: 0 });
    expect(none.log.opened).toEqual([2, 1]);
    expect(none.results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    expect(String(none.failure)).toMatch(/Out of memory/);
  });

  it('fails every request still writing where a forward pass fails, and reports the failure', async () => {
    const out = await batch(PROMPTS.slice(0, 2), [greedy(5), greedy(5)], { failForward: 2 });
    expect(out.results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    expect(String(out.failure)).toMatch(/device lost/);
    expect(out.log.disposed).toBe(true);
  });
});
