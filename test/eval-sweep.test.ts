import { beforeAll, describe, expect, it } from 'vitest';
import type { ChatMessage, GenerateOptions, GenerateResult, TextGenerator } from '../src/core/generation';
import { ExtractiveEngine } from '../src/engines/extractive/engine';
import { loadQwenTokenizer, type QwenTokenizer } from '../src/engines/qwen-tokenizer';
import type { BatchRequest } from '../src/core/batch';
import { generatedEssay } from '../src/eval/essay';
import { cellsCsv, formatTables } from '../src/eval/report';
import { FULL_CONTEXT_TEMPLATE, planSweep, runSweep, type SampleResult, type SweepContext, type SweepSpec, summarize, sweepSpec } from '../src/eval/sweep';

let tok: QwenTokenizer;
let engine: ExtractiveEngine;

beforeAll(async () => {
  tok = await loadQwenTokenizer();
  engine = new ExtractiveEngine(tok);
});

const K = 1024;

function context(generator: TextGenerator = engine, extra: Partial<SweepContext> = {}): SweepContext {
  return { generator, tokenizer: tok, contextWindow: engine.contextWindow, essay: generatedEssay(), ...extra };
}

async function collect(spec: SweepSpec, ctx: SweepContext, done?: Set<number>): Promise<SampleResult[]> {
  const out: SampleResult[] = [];
  for await (const r of runSweep(spec, ctx, done)) out.push(r);
  return out;
}

/** Counts requests and remembers their prompts, then lets the extractive engine answer. */
class Spy implements TextGenerator {
  prompts: string[] = [];
  async generate(messages: readonly ChatMessage[], options: GenerateOptions): Promise<GenerateResult> {
    this.prompts.push(messages[0]!.content);
    return engine.generate(messages, options);
  }
}

describe('planning', () => {
  it('orders samples by length, then task, with a seed of their own', () => {
    const spec = sweepSpec({ tasks: ['vt', 'niah_single_1'], lengths: [32 * K, 8 * K], samples: 2 });
    const plan = planSweep(spec);
    expect(plan.map((p) => `${p.length / K}/${p.task}/${p.index}`)).toEqual([
      '8/vt/0',
      '8/vt/1',
      '8/niah_single_1/0',
      '8/niah_single_1/1',
      '32/vt/0',
      '32/vt/1',
      '32/niah_single_1/0',
      '32/niah_single_1/1',
    ]);
    expect(plan.map((p) => p.ordinal)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect(new Set(plan.map((p) => p.seed)).size).toBe(8);
    expect(planSweep(spec)).toEqual(plan);
    expect(planSweep({ ...spec, seed: 1 })[0]!.seed).not.toBe(plan[0]!.seed);
  });
});

describe('memory mode', () => {
  it('reads each sample with the memory loop and scores its answer', async () => {
    const spy = new Spy();
    const spec = sweepSpec({ tasks: ['niah_single_1', 'niah_multikey_2', 'vt'], lengths: [8 * K], samples: 2 });
    const results = await collect(spec, context(spy));
    expect(results.map((r) => r.scores?.score)).toEqual([1, 1, 1, 1, 0.2, 0.2]);
    for (const r of results) {
      expect(r.chunks).toBe(2); // 8K tokens in chunks of up to 5,000
      expect(r.documentTokens).toBeGreaterThan(8 * K * 0.98);
      expect(r.answer).toContain(r.references[0]);
      expect(r.promptTokens).toBeGreaterThan(r.documentTokens);
    }
    // Two reading steps and one answer per sample, with the MemAgent prompts.
    expect(spy.prompts).toHaveLength(3 * results.length);
    expect(spy.prompts.filter((p) => p.includes('Updated memory:'))).toHaveLength(2 * results.length);
    expect(spy.prompts.filter((p) => p.includes('Your answer:'))).toHaveLength(results.length);
  });

  it('gives each sample’s requests a draft-length tuner of the sample’s own', async () => {
    const tuners: unknown[] = [];
    const recording: TextGenerator = {
      generate: (messages, options) => {
        tuners.push(options.draftTuner);
        return engine.generate(messages, options);
      },
    };
    const spec = sweepSpec({ tasks: ['niah_single_1'], lengths: [8 * K], samples: 2 });
    const results = await collect(spec, context(recording));
    const perSample = results.map((r) => r.chunks + 1); // each chunk's step and the answer
    expect(tuners).toHaveLength(perSample[0]! + perSample[1]!);
    const [first, second] = [tuners.slice(0, perSample[0]), tuners.slice(perSample[0])];
    expect(first[0]).toBeDefined();
    expect(new Set(first).size).toBe(1);
    expect(new Set(second).size).toBe(1);
    expect(second[0]).not.toBe(first[0]);
  });

  it('reads samples together where the engine batches: each step one batch of the group, results as read alone', async () => {
    const spec = sweepSpec({ tasks: ['niah_single_1', 'vt'], lengths: [8 * K], samples: 2 });
    const alone = await collect(spec, context());
    const batches: number[] = [];
    const send = async (requests: readonly BatchRequest[]) => {
      batches.push(requests.length);
      return Promise.allSettled(requests.map((r) => engine.generate(r.messages, r.options)));
    };
    const together = await collect(spec, context(engine, { together: { send, size: 3 } }));
    const strip = (r: SampleResult) => ({ ...r, generateMs: 0, chunkMs: 0, answerMs: 0 });
    expect(together.map(strip).sort((a, b) => a.ordinal - b.ordinal)).toEqual(alone.map(strip));
    // Three samples of two chunks (three steps each, the answer's included), then the fourth by the reader freed first.
    expect(batches).toEqual([3, 3, 3, 1, 1, 1]);
  });

  it('keeps a group full: a sample that ends early gives its place to the next at once', async () => {
    // Two places, three samples: the 8K one ends first, and the 24K one takes its place while the 16K one still reads.
    const spec = sweepSpec({ tasks: ['niah_single_1'], lengths: [8 * K, 16 * K, 24 * K], samples: 1 });
    const batches: number[] = [];
    const send = async (requests: readonly BatchRequest[]) => {
      batches.push(requests.length);
      return Promise.allSettled(requests.map((r) => engine.generate(r.messages, r.options)));
    };
    const results = (await collect(spec, context(engine, { together: { send, size: 2 } }))).sort((a, b) => a.ordinal - b.ordinal);
    expect(results.map((r) => r.scores?.score)).toEqual([1, 1, 1]);
    const [short, middle, long] = results.map((r) => r.chunks + 1); // each chunk's step and the answer
    expect(short).toBeLessThan(middle!);
    // The long sample's first step goes with the middle one's step after the short one's answer.
    expect(batches).toHaveLength(Math.max(middle!, short! + long!));
    expect(batches.filter((n) => n === 2)).toHaveLength(middle!);
  });

  it('fails a sample whose request fails alone, its reason on its row; a failure the engine cannot go on from ends the sweep', async () => {
    const spec = sweepSpec({ tasks: ['niah_single_1', 'vt'], lengths: [8 * K], samples: 1 });
    const broken: TextGenerator = {
      generate: (messages, options) =>
        messages[0]!.content.includes('variables') ? Promise.reject(new Error('The reply was cut off.')) : engine.generate(messages, options),
    };
    const send = (requests: readonly BatchRequest[]) => Promise.allSettled(requests.map((r) => broken.generate(r.messages, r.options)));
    const results = (await collect(spec, context(broken, { together: { send, size: 2 } }))).sort((a, b) => a.ordinal - b.ordinal);
    expect(results.map((r) => [r.task, r.scores?.score ?? null, r.failed ?? null])).toEqual([
      ['niah_single_1', 1, null],
      ['vt', null, 'The reply was cut off.'],
    ]);
    const alone = await collect(spec, context(broken));
    expect(alone.map((r) => r.failed ?? null)).toEqual([null, 'The reply was cut off.']);
    const cells = summarize(spec, results);
    expect(cells.find((c) => c.task === 'vt')).toMatchObject({ finished: 1, scored: 0, skipped: 0, failed: 1 });
    expect(formatTables(spec, cells)).toContain('0/1 (1 failed)');
    await expect(collect(spec, context(broken, { fatal: () => true }))).rejects.toThrow('The reply was cut off.');
  });

  it('reports progress within a sample and resumes after the samples already done', async () => {
    const spec = sweepSpec({ tasks: ['niah_single_1'], lengths: [8 * K], samples: 3 });
    const steps: string[] = [];
    const rest = await collect(spec, context(engine, { onStep: (s) => steps.push(`${s.ordinal}:${s.chunk}/${s.chunks}`) }), new Set([0, 1]));
    expect(rest.map((r) => r.ordinal)).toEqual([2]);
    expect(steps).toEqual(['2:1/2', '2:2/2']);
  });

  it('stops when aborted', async () => {
    const stop = new AbortController();
    stop.abort();
    const spec = sweepSpec({ tasks: ['niah_single_1'], lengths: [8 * K], samples: 1 });
    await expect(collect(spec, context(engine, { signal: stop.signal }))).rejects.toMatchObject({ name: 'AbortError' });
  });
});

describe('full-context mode', () => {
  it('puts the whole document in one prompt', async () => {
    const spy = new Spy();
    const spec = sweepSpec({ tasks: ['niah_single_2', 'book_qa'], lengths: [8 * K], samples: 1, mode: 'full' });
    const results = await collect(spec, context(spy));
    expect(spy.prompts).toHaveLength(2);
    expect(spy.prompts[0]).toContain('<section>');
    expect(spy.prompts[0]).not.toContain('<memory>');
    expect(spy.prompts[0]!.startsWith(FULL_CONTEXT_TEMPLATE.slice(0, 40))).toBe(true);
    expect(results[0]).toMatchObject({ chunks: 1, scores: { score: 1 } });
    expect(results[1]!.scores).toHaveProperty('f1');
  });

  it('marks a document longer than the engine window as too long instead of cutting it', async () => {
    const spy = new Spy();
    const spec = sweepSpec({ tasks: ['niah_single_1'], lengths: [128 * K], samples: 1, mode: 'full' });
    const [r] = await collect(spec, context(spy));
    expect(spy.prompts).toHaveLength(0);
    expect(r!.scores).toBeNull();
    expect(r!.skipped).toMatch(/engine holds 131,072/);
    const [cell] = summarize(spec, [r!]);
    expect(cell).toMatchObject({ finished: 1, scored: 0, skipped: 1, accuracy: null });
  });
});

describe('summaries and reports', () => {
  const result = (task: 'vt' | 'book_qa', length: number, score: number, chunks: number, chunkMs: number): SampleResult => ({
    ordinal: 0,
    task,
    length,
    index: 0,
    seed: 1,
    documentTokens: length,
    question: 'q',
    references: ['a'],
    reply: '',
    answer: '',
    scores: task === 'book_qa' ? { score, substringMatch: score, exactMatch: 0, f1: 0.5 } : { score },
    chunks,
    chunkMs,
    answerMs: 10,
    generateMs: 1,
    promptTokens: 9000,
    completionTokens: 1000,
  });

  it('averages each cell: accuracy, time per chunk, tokens per second', () => {
    const spec = { tasks: ['vt', 'book_qa'] as const, lengths: [8 * K, 32 * K], samples: 2 };
    const cells = summarize({ ...spec, tasks: [...spec.tasks] }, [
      result('vt', 8 * K, 1, 2, 100),
      result('vt', 8 * K, 0.2, 2, 300),
      result('book_qa', 8 * K, 1, 2, 190),
    ]);
    expect(cells).toHaveLength(4);
    expect(cells[0]).toMatchObject({ task: 'vt', length: 8 * K, finished: 2, scored: 2, exactMatch: null });
    expect(cells[0]!.accuracy).toBeCloseTo(0.6);
    expect(cells[0]!.meanChunkMs).toBeCloseTo(100); // 400 ms over 4 chunks
    expect(cells[0]!.tokensPerSecond).toBeCloseTo((20_000 * 1000) / 420);
    expect(cells[1]).toMatchObject({ task: 'vt', length: 32 * K, finished: 0, accuracy: null, meanChunkMs: null });
    expect(cells[2]).toMatchObject({ task: 'book_qa', accuracy: 1, exactMatch: 0, f1: 0.5 });

    const table = formatTables({ tasks: ['vt', 'book_qa'], lengths: [8 * K, 32 * K] }, cells);
    const lines = table.split('\n');
    expect(lines.slice(0, 4)).toEqual(['accuracy %     8K  32K', 'vt           60.0    —', 'book_qa     100.0    —', 'mean         80.0    —']);
    expect(table).toMatch(/^vt\s+8K\s+2\/2\s+60\.0\s+100\s+47,619$/m);
    expect(cellsCsv(cells).split('\n')[1]).toBe('vt,8192,2,2,0,0.6,,,100,47619.04761904762');
  });
});
