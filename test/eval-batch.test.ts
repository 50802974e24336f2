import 'fake-indexeddb/auto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { checkDatasetFiles, planDatasetEval, runDatasetEval } from '../src/cli/eval-data';
import type { BatchRequest } from '../src/core/batch';
import type { ChatMessage, GenerateOptions, GenerateResult } from '../src/core/generation';
import type { BatchLimit, Engine } from '../src/engines/engine';
import { ExtractiveEngine } from '../src/engines/extractive/engine';
import { loadQwenTokenizer, type QwenTokenizer } from '../src/engines/qwen-tokenizer';
import { batchLimitFor, type BatchShape, kvShape } from '../src/engines/webllm/driver/batch-limit';
import { QWEN_CONTEXT_LIMIT } from '../src/engines/webllm/models/models';
import { methodSettings, methodStepTokens } from '../src/eval/method';
import { sweepSpec, sweepStepTokens } from '../src/eval/sweep';
import type { EvaluationEvent, EvaluationRequest } from '../src/agent/protocol';
import { EngineCache } from '../src/jobs/engines';
import { Evaluator } from '../src/runs/evaluator';
import { Store } from '../src/storage/db';
import { LINE_ITEMS, LIST_ITEMS, STAND_IN_TEMPLATES } from './fixtures/hotpotqa';

let tok: QwenTokenizer;

beforeAll(async () => {
  tok = await loadQwenTokenizer();
});

const K = 1024;

/**
 * The Qwen2.5 q4 builds of WebLLM's prebuilt list: each model's KV heads and
 * layers (its config.json) and the list's vram_required_MB, which the WebLLM
 * engine takes as the weights' size.
 */
const QWEN_BUILDS: { id: string; config: Parameters<typeof kvShape>[0]; vramMB: number }[] = [
  ['0.5B', 'q4f16_1', 944.62],
  ['0.5B', 'q4f32_1', 1060.2],
  ['1.5B', 'q4f16_1', 1629.75],
  ['1.5B', 'q4f32_1', 1888.97],
  ['3B', 'q4f16_1', 2504.76],
  ['3B', 'q4f32_1', 2893.64],
  ['7B', 'q4f16_1', 5106.67],
  ['7B', 'q4f32_1', 5900.09],
].map(([size, quant, vramMB]) => ({
  id: `Qwen2.5-${size}-Instruct-${quant}-MLC`,
  config: {
    '0.5B': { num_hidden_layers: 24, num_key_value_heads: 2, head_dim: 64 },
    '1.5B': { num_hidden_layers: 28, num_key_value_heads: 2, head_dim: 128 },
    '3B': { num_hidden_layers: 36, num_key_value_heads: 2, head_dim: 128 },
    '7B': { num_hidden_layers: 28, num_key_value_heads: 4, head_dim: 128 },
  }[size as string],
  vramMB: vramMB as number,
}));

function shapeOf(build: (typeof QWEN_BUILDS)[number]): BatchShape {
  return { ...kvShape(build.config, build.id)!, weightsBytes: build.vramMB * 1024 ** 2 };
}

/** The limit as the WebLLM engine gives it: WebLLM's own cache of a window that holds the step stays beside the batch's. */
function limitAt(shape: BatchShape, contextTokens: number): BatchLimit {
  return batchLimitFor({ ...shape, ownCacheTokens: contextTokens }, contextTokens);
}

/**
 * A stand-in for an engine that writes several sequences in one pass: the
 * extractive engine answers each request, and every batch's size is kept.
 * Its batch limit is a Qwen2.5 q4 build's, in a window of Qwen's 32K.
 * A request whose prompt holds `failOn` is rejected alone, as a bad reply is.
 */
class BatchingEngine implements Engine {
  readonly id = 'webllm';
  readonly contextWindow = QWEN_CONTEXT_LIMIT;
  readonly inner: ExtractiveEngine;
  readonly batches: number[] = [];
  readonly asked: number[] = [];

  constructor(
    readonly tokenizer: QwenTokenizer,
    private readonly shape: BatchShape,
    private readonly failOn?: string,
  ) {
    this.inner = new ExtractiveEngine(tokenizer);
  }

  generate(messages: readonly ChatMessage[], options: GenerateOptions): Promise<GenerateResult> {
    this.batches.push(1);
    return this.answer(messages, options);
  }

  async generateBatch(requests: readonly BatchRequest[]): Promise<PromiseSettledResult<GenerateResult>[]> {
    this.batches.push(requests.length);
    return Promise.allSettled(requests.map((r) => this.answer(r.messages, r.options)));
  }

  async batchLimit(contextTokens: number): Promise<BatchLimit> {
    this.asked.push(contextTokens);
    return limitAt(this.shape, contextTokens);
  }

  private answer(messages: readonly ChatMessage[], options: GenerateOptions): Promise<GenerateResult> {
    if (this.failOn && messages.at(-1)!.content.includes(this.failOn)) return Promise.reject(new Error('The model wrote no reply to this step.'));
    return this.inner.generate(messages, options);
  }
}

const QWEN_7B_F16 = QWEN_BUILDS.find((b) => b.id === 'Qwen2.5-7B-Instruct-q4f16_1-MLC')!;

let dbCount = 0;
const stores: Store[] = [];

afterEach(() => {
  for (const s of stores.splice(0)) s.close();
});

async function evaluate(engine: Engine, request: EvaluationRequest) {
  const store = await Store.open(`memagent-eval-batch-test-${++dbCount}`);
  stores.push(store);
  const events: EvaluationEvent[] = [];
  let ended: () => void = () => undefined;
  const done = new Promise<void>((resolve) => (ended = resolve));
  const publish = (e: EvaluationEvent) => {
    events.push(e);
    if (e.type === 'status' && (e.status === 'done' || e.status === 'failed')) ended();
  };
  const evaluator = new Evaluator({ store, engines: new EngineCache(async () => engine), publish, stepIntervalMs: 0 });
  const id = await evaluator.start(request);
  await done;
  return { store, id, evaluation: (await store.getEvaluation(id))! };
}

const generated = (samples: number): EvaluationRequest => ({ engineId: 'webllm', tasks: ['niah_single_1', 'vt'], lengths: [8 * K], samples, mode: 'memory' });

describe('how many samples an evaluation reads together', () => {
  it("sizes a group at one step (chunk, memory, prompt and reply), where the model's whole window held one sample", () => {
    const count = (s: string) => tok.count(s);
    const step = sweepStepTokens(sweepSpec({ tasks: ['niah_single_1'], lengths: [8 * K] }), { contextWindow: QWEN_CONTEXT_LIMIT, count });
    // The paper's 5,000-token chunk, a 1,024-token memory and as long a reply, the template and a question.
    expect(step).toBeGreaterThan(5000 + 2 * 1024);
    expect(step).toBeLessThan(8000);
    const sizes = QWEN_BUILDS.map((b) => ({ id: b.id, window: limitAt(shapeOf(b), QWEN_CONTEXT_LIMIT).size, step: limitAt(shapeOf(b), step).size }));
    // At Qwen's 32K window every q4 build held one sample; at one step, three to eight.
    for (const s of sizes) {
      expect(s.window, s.id).toBe(1);
      expect(s.step, s.id).toBeGreaterThanOrEqual(3);
      expect(s.step, s.id).toBeLessThanOrEqual(8);
    }
    // A dataset evaluation's step is sized the same way.
    const item = methodStepTokens(methodSettings({ method: 'recurrent', templates: STAND_IN_TEMPLATES }), count);
    expect(limitAt(shapeOf(QWEN_7B_F16), item).size).toBeGreaterThan(1);
  });

  it("reads a generated sweep's samples together on a Qwen2.5-7B q4f16 build's limits", async () => {
    const engine = new BatchingEngine(tok, shapeOf(QWEN_7B_F16));
    const { store, id, evaluation } = await evaluate(engine, generated(2));
    expect(evaluation).toMatchObject({ status: 'done', completed: 4 });
    expect(Math.max(...engine.asked)).toBeLessThan(QWEN_CONTEXT_LIMIT);
    // Four samples of two chunks each: every step (the answer's too) one batch of all four.
    expect(engine.batches).toEqual([4, 4, 4]);
    const samples = await store.listEvaluationSamples(id);
    expect(samples.map((s) => s.scores?.score)).toEqual([1, 1, 0.2, 0.2]);
  });

  it('reads a dataset evaluation in batches as it reads generated samples', async () => {
    const engine = new BatchingEngine(tok, shapeOf(QWEN_7B_F16));
    const files = [new File([JSON.stringify(LIST_ITEMS)], 'eval_50.json'), new File([LINE_ITEMS.map((i) => JSON.stringify(i)).join('\n')], 'eval_200.jsonl')];
    const { store, id, evaluation } = await evaluate(engine, {
      ...generated(1),
      tasks: [],
      lengths: [],
      chunkTokens: 120,
      dataset: { files, templates: STAND_IN_TEMPLATES, prompts: 'custom' },
    });
    expect(evaluation).toMatchObject({ status: 'done', total: 4, completed: 4 });
    expect(Math.max(...engine.batches)).toBe(4);
    expect(engine.batches.filter((n) => n > 1).length).toBeGreaterThan(0);
    const samples = await store.listDatasetSamples(id);
    expect(samples.map((s) => [s.ordinal, s.scores?.sub_em])).toEqual([
      [0, 1],
      [1, 1],
      [2, 1],
      [3, 1],
    ]);
  });

  it('fails a sample whose request fails alone: the others of its batch are read and scored, its row says why', async () => {
    // vt's question names its variable; the needle tasks' do not.
    const engine = new BatchingEngine(tok, shapeOf(QWEN_7B_F16), 'variable');
    const { store, id, evaluation } = await evaluate(engine, generated(2));
    expect(evaluation).toMatchObject({ status: 'done', completed: 4 });
    expect(engine.batches[0]).toBe(4);
    const samples = await store.listEvaluationSamples(id);
    expect(samples.map((s) => [s.task, s.scores?.score ?? null, s.failed ?? null])).toEqual([
      ['niah_single_1', 1, null],
      ['niah_single_1', 1, null],
      ['vt', null, 'The model wrote no reply to this step.'],
      ['vt', null, 'The model wrote no reply to this step.'],
    ]);
  });
});

describe('memagent eval --data on an engine that batches', () => {
  it('reads as many items together as one batch of the step holds, says so, and fails an item alone', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'memagent-eval-batch-'));
    try {
      const file = join(dir, 'eval_50.json');
      writeFileSync(file, JSON.stringify([...LIST_ITEMS, ...LINE_ITEMS]));
      const plan = planDatasetEval({ data: [file], settings: { chunkTokens: 120 }, concurrency: 1 });
      await checkDatasetFiles(plan);
      // The third item's question: its requests fail, the other three read on in the same batches.
      const engine = new BatchingEngine(tok, shapeOf(QWEN_7B_F16), 'Oda Brand');
      const said: string[] = [];
      let out = '';
      const code = await runDatasetEval(plan, engine, { say: (l) => said.push(l), out: (t) => (out += t), write: () => undefined, describeEngine: 'stand-in' });
      expect(code).toBe(0);
      expect(said[0]).toMatch(/^At most 8 samples are read together: 8 questions of [\d,]+ tokens at most in one batch/);
      expect(out).toContain('; 8 at a time.');
      // --concurrency 1 gives way to the batch: all four items in each step's batch.
      expect(engine.batches[0]).toBe(4);
      expect(said.filter((l) => l.includes('failed, left out of the averages: The model wrote no reply to this step.'))).toHaveLength(1);
      expect(said.filter((l) => l.includes(' sub_em '))).toHaveLength(3);
      expect(out).toContain('4 items read, 3 scored');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
