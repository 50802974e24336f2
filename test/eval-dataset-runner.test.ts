import 'fake-indexeddb/auto';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { ChatMessage, GenerateOptions, GenerateResult } from '../src/core/generation';
import { pyStrip } from '../src/core/pytext';
import type { Engine } from '../src/engines/engine';
import { ExtractiveEngine } from '../src/engines/extractive';
import { loadQwenTokenizer, type QwenTokenizer } from '../src/engines/qwen-tokenizer';
import { type EvaluationRequest, EvaluationRequestError, Evaluator } from '../src/runner/evaluation';
import { type EvaluationEvent, Store } from '../src/storage/db';
import { LINE_ITEMS, LIST_ITEMS, STAND_IN_TEMPLATES } from './fixtures/hotpotqa';

let tok: QwenTokenizer;

beforeAll(async () => {
  tok = await loadQwenTokenizer();
});

/** The extractive engine, stopping for good at call `holdAt`: a tab closed mid-item. */
class HaltingEngine implements Engine {
  readonly id = 'extractive';
  readonly inner: ExtractiveEngine;
  readonly contextWindow: number;
  calls = 0;
  private reached: () => void = () => undefined;
  readonly held = new Promise<void>((resolve) => (this.reached = resolve));

  constructor(
    readonly tokenizer: QwenTokenizer,
    private readonly holdAt: number,
  ) {
    this.inner = new ExtractiveEngine(tokenizer);
    this.contextWindow = this.inner.contextWindow;
  }

  async generate(messages: readonly ChatMessage[], options: GenerateOptions): Promise<GenerateResult> {
    if (this.calls++ !== this.holdAt) return this.inner.generate(messages, options);
    this.reached();
    return new Promise<GenerateResult>(() => undefined);
  }
}

let dbCount = 0;
const stores: Store[] = [];

async function openStore(): Promise<Store> {
  const store = await Store.open(`memagent-dataset-test-${++dbCount}`);
  stores.push(store);
  return store;
}

afterEach(() => {
  for (const s of stores.splice(0)) s.close();
});

function evaluator(store: Store, engine: Engine = new ExtractiveEngine(tok)) {
  const events: EvaluationEvent[] = [];
  let wake = () => undefined as void;
  const publish = (e: EvaluationEvent) => {
    events.push(e);
    wake();
  };
  const finished = (id: string) =>
    new Promise<void>((resolve) => {
      const check = () => events.some((e) => e.type === 'status' && e.evaluationId === id && (e.status === 'done' || e.status === 'failed')) && resolve();
      wake = check;
      check();
    });
  return { events, finished, evaluator: new Evaluator({ store, createEngine: async () => engine, publish, stepIntervalMs: 0 }) };
}

const files = () => [
  new File([JSON.stringify(LIST_ITEMS)], 'eval_50.json'),
  new File([LINE_ITEMS.map((i) => JSON.stringify(i)).join('\n')], 'eval_200.jsonl'),
];

const request = (dataset: Partial<NonNullable<EvaluationRequest['dataset']>> = {}): EvaluationRequest => ({
  engineId: 'extractive',
  tasks: [],
  lengths: [],
  samples: 1,
  mode: 'memory',
  chunkTokens: 120,
  dataset: { files: files(), templates: STAND_IN_TEMPLATES, prompts: { set: 'stand-in', sha256: null }, ...dataset },
});

describe('Evaluator with dataset files', () => {
  it("stores the files' items, reads each by the method and records how", async () => {
    const store = await openStore();
    const { evaluator: e, finished } = evaluator(store);
    const read: [number, number][] = [];
    const id = await e.start(request(), (bytes, total) => read.push([bytes, total]));
    await finished(id);

    const evaluation = (await store.getEvaluation(id))!;
    expect(evaluation).toMatchObject({ status: 'done', total: 4, completed: 4 });
    expect(evaluation.dataset).toMatchObject({
      method: 'recurrent',
      cutter: 'token-slices',
      files: [
        { name: 'eval_50.json', numDocs: 50, items: 2 },
        { name: 'eval_200.jsonl', numDocs: 200, items: 2 },
      ],
      settings: { chunkTokens: 120, memoryTokens: 1024, temperature: 0.7, topP: 0.95 },
      prompts: { set: 'stand-in', sha256: null },
    });
    const total = files().reduce((n, f) => n + f.size, 0);
    expect(read.at(-1)).toEqual([total, total]);

    const samples = await store.listDatasetSamples(id);
    expect(samples.map((s) => [s.ordinal, s.file, s.index, s.scores?.sub_em])).toEqual([
      [0, 'eval_50.json', 0, 1],
      [1, 'eval_50.json', 1, 1],
      [2, 'eval_200.jsonl', 0, 1],
      [3, 'eval_200.jsonl', 1, 1],
    ]);
    for (const [k, s] of samples.entries()) {
      const item = [...LIST_ITEMS, ...LINE_ITEMS][k]!;
      expect(s.contextTokens).toBe(tok.count(pyStrip(item.context)));
      expect(s.chunks).toBe(Math.ceil(s.contextTokens / 120));
      expect(s.reply).toMatch(/the answer is/);
    }
    // The generated tasks' listing does not mistake dataset items for its samples.
    expect(await store.listEvaluationSamples(id)).toEqual([]);
  });

  it('takes only the first items of each file when asked', async () => {
    const store = await openStore();
    const { evaluator: e, finished } = evaluator(store);
    const id = await e.start(request({ itemsPerFile: 1 }));
    await finished(id);
    expect((await store.listDatasetSamples(id)).map((s) => [s.file, s.index])).toEqual([
      ['eval_50.json', 0],
      ['eval_200.jsonl', 0],
    ]);
  });

  it('after the tab goes away mid-item, another resumes from the next unfinished item', async () => {
    const store = await openStore();
    const halting = new HaltingEngine(tok, 9);
    const first = evaluator(store, halting);
    const id = await first.evaluator.start(request());
    await halting.held;
    const before = (await store.listDatasetSamples(id)).map((s) => s.ordinal);
    expect(before.length).toBeGreaterThanOrEqual(1);
    expect(before.length).toBeLessThan(4);

    const second = evaluator(store);
    await second.evaluator.resume(id);
    await second.finished(id);
    expect((await store.listDatasetSamples(id)).map((s) => s.ordinal)).toEqual([0, 1, 2, 3]);
    expect(second.events.flatMap((ev) => (ev.type === 'sample' ? [ev.ordinal] : []))).toEqual([0, 1, 2, 3].filter((o) => !before.includes(o)));
  });

  it('refuses a file it cannot read whole, leaving nothing stored', async () => {
    const store = await openStore();
    const { evaluator: e } = evaluator(store);
    const broken = new File(['{"context": "a", "input": "b", "answers": ["c"]}\n{"context": "a"'], 'eval_100.jsonl');
    await expect(e.start(request({ files: [...files(), broken] }))).rejects.toThrow(EvaluationRequestError);
    await expect(e.start(request({ files: [...files(), broken] }))).rejects.toThrow(/eval_100\.jsonl ends in the middle of an item \(line 2\)/);
    await expect(e.start(request({ files: [files()[0]!, files()[0]!] }))).rejects.toThrow(/Two dataset files are named eval_50\.json/);
    await expect(e.start({ ...request(), chunkTokens: 200_000 })).rejects.toThrow(/One step of the method needs up to/);
    expect(await store.listEvaluations()).toEqual([]);
    const leftover = await new Promise<number>((resolve) => {
      const open = indexedDB.open(`memagent-dataset-test-${dbCount}`);
      open.onsuccess = () => {
        const count = open.result.transaction('datasetItems').objectStore('datasetItems').count();
        count.onsuccess = () => {
          open.result.close();
          resolve(count.result);
        };
      };
    });
    expect(leftover).toBe(0);
  });
});
