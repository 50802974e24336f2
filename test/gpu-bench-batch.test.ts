import { describe, expect, it } from 'vitest';
import type { GenerateResult } from '../src/core/generation';
import type { GpuSession, SessionRequest } from '../src/engines/webllm/gpu-session';
import type { ModelEntry } from '../src/engines/webllm/models/models';
import { describeBatch, measureBatch, measureSuiteBatches, questionMessages } from '../bench/gpu/batch';
import { questionSeed } from '../src/core/plan';
import { BenchUsageError, parseBenchArgs } from '../bench/gpu/options';

const DEFAULTS = { library: 'lib.wasm', tokenizer: 'tokenizer.json', text: 'book.txt', cacheDir: '/cache', out: 'out.json' };
const MODEL = { id: 'm', label: 'm' } as ModelEntry;

/** A session whose replies are the prompt's length and index, written in one pass each (single) or in two passes (batched). */
function fakeSession(sent: SessionRequest[][]) {
  const reply = (r: SessionRequest) => [r.messages[0]!.content.length, r.options.maxTokens];
  const result = (tokens: number[], passes?: number): GenerateResult => ({
    text: 'x',
    finishReason: 'length',
    usage: { promptTokens: 3, completionTokens: tokens.length, ...(passes !== undefined && { writing: { passes, drafted: 0, accepted: 0 } }) },
  });
  return {
    write: async (_m: ModelEntry, _w: number, r: SessionRequest) => {
      sent.push([r]);
      return { result: result(reply(r), r.speculation ? 1 : undefined), tokens: reply(r) };
    },
    writeBatch: async (_m: ModelEntry, _w: number, rs: readonly SessionRequest[]) => {
      sent.push([...rs]);
      const tokens = rs.map(reply);
      // A speculating request drafted 3 tokens and kept 2; each row took 1, 2, … ms to sample.
      const results = tokens.map((t, i) => ({ status: 'fulfilled' as const, value: result(t, rs[i]!.speculation ? 1 : undefined) }));
      for (const r of results) if (r.value.usage.writing) r.value.usage.writing = { passes: 1, drafted: 3, accepted: 2 };
      const samplingMs = tokens.flat().map((_, i) => i + 1);
      return { results, tokens, passes: { prefill: 1, write: 1 }, batched: true, samplingMs };
    },
  } as unknown as GpuSession;
}

describe('the GPU benchmark’s several questions', () => {
  it('takes --questions N of at least two', () => {
    expect(parseBenchArgs(['--size', 'tiny', '--questions', '3'], DEFAULTS)).toMatchObject({ size: 'tiny', questions: 3 });
    expect(parseBenchArgs([], DEFAULTS)).not.toHaveProperty('questions');
    expect(parseBenchArgs(['--questions', '2', '--speculate', 'oracle'], DEFAULTS)).toMatchObject({ questions: 2, speculate: 'oracle' });
    for (const wrong of [
      ['--questions', '1'],
      ['--questions', 'two'],
    ])
      expect(() => parseBenchArgs(wrong, DEFAULTS)).toThrow(BenchUsageError);
  });

  it('samples both ways as asked, each question with its own seed from the read’s, and records the drafted and kept tokens and a row’s sampling time', async () => {
    const sent: SessionRequest[][] = [];
    const record = await measureBatch(
      { session: fakeSession(sent), model: MODEL, window: 8192, log: () => undefined },
      {
        messages: [{ role: 'user', content: 'Who?' }],
        question: 'Who?',
        questions: 2,
        maxTokens: 2,
        mode: { kind: 'oracle' },
        draft: 2,
        sampling: { temperature: 0.7, topP: 0.95, seed: 7 },
      },
    );
    const seeds = [questionSeed(7, 0), questionSeed(7, 1)];
    expect(seeds[0]).toBe(7);
    for (const requests of sent) {
      for (const r of requests) expect(r.options).toMatchObject({ temperature: 0.7, topP: 0.95 });
    }
    // The plain replies the oracle drafts from, the two alone, then the batch: each question always with its own seed.
    expect(sent.map((rs) => rs.map((r) => r.options.seed))).toEqual([[seeds[0]], [seeds[1]], [seeds[0]], [seeds[1]], seeds]);
    expect(record.sampling).toEqual({ temperature: 0.7, topP: 0.95, seed: 7 });
    expect(record.batched).toMatchObject({ drafted: 6, kept: 4 });
    expect(record.single).toMatchObject({ drafted: 0, kept: 0 });
    // Four rows sampled in 1, 2, 3 and 4 ms: the median is 2.5.
    expect(record.samplingMsPerRow).toBe(2.5);
    const table = describeBatch(record).join('\n');
    expect(table).toContain('2 at temperature 0.7, top-p 0.95, seed 7');
    expect(table).toMatch(/one batch .* 4 of 6 drafted kept/);
    expect(table).toContain('sampling a row in the batch: 2.500 ms (median)');
  });

  it('measures 1, 2 and 4 questions for the suite, greedy and at temperature 0.7 and top-p 0.95, with the read’s seed', async () => {
    const sent: SessionRequest[][] = [];
    const records = await measureSuiteBatches(
      { session: fakeSession(sent), model: MODEL, window: 8192, log: () => undefined },
      { messages: [{ role: 'user', content: 'Who?' }], question: 'Who?', maxTokens: 2, seed: 3 },
    );
    expect(records.map((r) => [r.questions, r.sampling.temperature, r.sampling.topP, r.sampling.seed])).toEqual([
      [1, 0, 0.95, 3],
      [2, 0, 0.95, 3],
      [4, 0, 0.95, 3],
      [1, 0.7, 0.95, 3],
      [2, 0.7, 0.95, 3],
      [4, 0.7, 0.95, 3],
    ]);
    expect(records.every((r) => r.same)).toBe(true);
  });

  it('asks the step’s prompt each question, the first as the step asked it', () => {
    const messages = [{ role: 'user' as const, content: 'Who?\nmemory\nsection' }];
    expect(questionMessages(messages, 'Who?', 0, 2)).toEqual(messages);
    expect(questionMessages(messages, 'Who?', 1, 2)[0]!.content).toBe('Who? (Question 2 of 2.)\nmemory\nsection');
  });

  it('records seconds, passes and tokens each way, their ratio, and each question’s tokens both ways', async () => {
    const sent: SessionRequest[][] = [];
    const lines: string[] = [];
    const record = await measureBatch(
      { session: fakeSession(sent), model: MODEL, window: 8192, log: (l) => lines.push(l) },
      { messages: [{ role: 'user', content: 'Who?\nm\ns' }], question: 'Who?', questions: 2, maxTokens: 2 },
    );
    expect(sent.map((s) => s.length)).toEqual([1, 1, 2]);
    expect(record).toMatchObject({
      questions: 2,
      maxTokens: 2,
      single: { passes: 4, written: 4, tokensPerPass: 1 },
      batched: { passes: 2, prefillPasses: 1, writePasses: 1, written: 4, tokensPerPass: 2 },
      singleTokens: [
        [8, 2],
        [27, 2],
      ],
      same: true,
    });
    expect(record.batchedTokens).toEqual(record.singleTokens);
    expect(record.speedup).toBeGreaterThan(0);
    expect(record).not.toHaveProperty('mode');
    const table = describeBatch(record).join('\n');
    expect(table).toMatch(/one by one .* 4 passes .* 4 written .* 1\.00 per pass/);
    expect(table).toMatch(/one batch .* 2 passes .* 4 written .* 2\.00 per pass/);
    expect(table).toMatch(/as fast as one by one; the same tokens for every question/);
  });

  it('takes the step’s plain reply as the first question’s one by one, its seconds and passes counted, and writes the others', async () => {
    const sent: SessionRequest[][] = [];
    const first = { tokens: [8, 2], seconds: 5, result: { text: 'x', finishReason: 'length' as const, usage: { promptTokens: 3, completionTokens: 2 } } };
    const record = await measureBatch(
      { session: fakeSession(sent), model: MODEL, window: 8192, log: () => undefined },
      { messages: [{ role: 'user', content: 'Who?\nm\ns' }], question: 'Who?', questions: 2, maxTokens: 2, first },
    );
    // Only the second question alone, then the batch of both.
    expect(sent.map((s) => s.map((r) => r.messages[0]!.content))).toEqual([['Who? (Question 2 of 2.)\nm\ns'], ['Who?\nm\ns', 'Who? (Question 2 of 2.)\nm\ns']]);
    expect(record.singleTokens).toEqual([
      [8, 2],
      [27, 2],
    ]);
    expect(record.single).toMatchObject({ passes: 4, written: 4 });
    expect(record.single.seconds).toBeGreaterThanOrEqual(5);
    expect(record.same).toBe(true);
  });

  it('writes the first question again where the step’s reply was plain but both ways speculate', async () => {
    const sent: SessionRequest[][] = [];
    const first = { tokens: [8, 2], seconds: 5, result: { text: 'x', finishReason: 'length' as const, usage: { promptTokens: 3, completionTokens: 2 } } };
    const record = await measureBatch(
      { session: fakeSession(sent), model: MODEL, window: 8192, log: () => undefined },
      { messages: [{ role: 'user', content: 'Who?' }], question: 'Who?', questions: 2, maxTokens: 2, mode: { kind: 'ngram' }, draft: 2, first },
    );
    expect(sent.map((s) => s.length)).toEqual([1, 1, 2]);
    expect(sent[0]![0]).toMatchObject({ messages: [{ content: 'Who?' }], speculation: { maxDraft: 2 } });
    expect(record.mode).toBe('ngram');
  });

  it('takes the step’s reply as the first question’s plain reply that the oracle drafts from, and writes the others’', async () => {
    const sent: SessionRequest[][] = [];
    const first = { tokens: [8, 2], seconds: 5, result: { text: 'x', finishReason: 'length' as const, usage: { promptTokens: 3, completionTokens: 2 } } };
    const record = await measureBatch(
      { session: fakeSession(sent), model: MODEL, window: 8192, log: () => undefined },
      { messages: [{ role: 'user', content: 'Who?' }], question: 'Who?', questions: 2, maxTokens: 2, mode: { kind: 'oracle' }, draft: 2, first },
    );
    // The second question's plain reply, both questions drafting alone, then the batch.
    expect(sent.map((s) => s.map((r) => r.speculation?.maxDraft))).toEqual([[undefined], [2], [2], [2, 2]]);
    expect(sent[0]![0]!.messages[0]!.content).toBe('Who? (Question 2 of 2.)');
    expect(record.single.passes).toBe(4);
  });

  it('writes both ways speculatively with --speculate’s mode, the oracle’s drafts from plain replies written first', async () => {
    const sent: SessionRequest[][] = [];
    const record = await measureBatch(
      { session: fakeSession(sent), model: MODEL, window: 8192, log: () => undefined },
      { messages: [{ role: 'user', content: 'Who?' }], question: 'Who?', questions: 2, maxTokens: 2, mode: { kind: 'oracle' }, draft: 2 },
    );
    expect(sent.map((s) => s.map((r) => r.speculation?.maxDraft))).toEqual([[undefined], [undefined], [2], [2], [2, 2]]);
    expect(record.mode).toBe('oracle');
    expect(record.single.passes).toBe(4);
  });
});
