import 'fake-indexeddb/auto';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { ChatMessage, GenerateOptions, GenerateResult } from '../src/core/generation';
import type { PromptFileSpec } from '../src/core/prompt-sets';
import { pyStrip } from '../src/core/pytext';
import type { Engine } from '../src/engines/engine';
import { ExtractiveEngine } from '../src/engines/extractive/engine';
import { loadQwenTokenizer, type QwenTokenizer } from '../src/engines/qwen-tokenizer';
import type { EvaluationRequest } from '../src/agent/protocol';
import { Evaluator } from '../src/runs/evaluator';
import { EngineCache } from '../src/jobs/engines';
import { RequestError } from '../src/jobs/request-error';
import { PromptLibrary } from '../src/runs/prompt-files';
import { Store } from '../src/storage/db';
import { datasetFiles, datasetRequest, LINE_ITEMS, LIST_ITEMS, STAND_IN_TEMPLATES } from './fixtures/hotpotqa';
import { STANDIN, STANDIN_BOXED, standinSpecs } from './support/prompt-standins';
import { evaluationEvents } from './support/evaluation-events';

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

/** The extractive engine under a model engine's id, keeping every prompt it is sent. */
class RecordingEngine implements Engine {
  readonly id = 'openai';
  readonly inner: ExtractiveEngine;
  readonly contextWindow: number;
  readonly prompts: string[] = [];

  constructor(readonly tokenizer: QwenTokenizer) {
    this.inner = new ExtractiveEngine(tokenizer);
    this.contextWindow = this.inner.contextWindow;
  }

  generate(messages: readonly ChatMessage[], options: GenerateOptions): Promise<GenerateResult> {
    this.prompts.push(messages.at(-1)!.content);
    return this.inner.generate(messages, options);
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

function evaluator(store: Store, engine: Engine = new ExtractiveEngine(tok), prompts?: PromptLibrary) {
  const { events, publish, finished } = evaluationEvents();
  return {
    events,
    finished,
    evaluator: new Evaluator({ store, engines: new EngineCache(async () => engine), publish, stepIntervalMs: 0, ...(prompts && { prompts }) }),
  };
}

const files = datasetFiles;

const request = (dataset: Partial<NonNullable<EvaluationRequest['dataset']>> = {}): EvaluationRequest =>
  datasetRequest({ dataset: { files: files(), templates: STAND_IN_TEMPLATES, prompts: 'custom', ...dataset } });

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
      prompts: { set: 'custom', sha256: null },
      promptRecord: { set: 'custom', label: 'Edited templates' },
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

  it('uses MemAgent (paper) for a model once its file is here, reads by the method recurrent and records the set; the boxed set reads by recurrent-boxed', async () => {
    const specs: PromptFileSpec[] = await standinSpecs();
    const offline = (async () => {
      throw new TypeError('Failed to fetch');
    }) as unknown as typeof fetch;
    const store = await openStore();
    const library = new PromptLibrary(store, { specs, fetch: offline });
    const paper = await library.import('recurrent.py', STANDIN);
    await library.import('recurrent_boxed.py', STANDIN_BOXED);
    const engine = new RecordingEngine(tok);
    const { evaluator: e, finished } = evaluator(store, engine, library);
    const id = await e.start({ ...request({ prompts: 'auto', templates: undefined, itemsPerFile: 1 }), engineId: 'openai' });
    await finished(id);
    const evaluation = (await store.getEvaluation(id))!;
    expect(evaluation.dataset).toMatchObject({
      method: 'recurrent',
      prompts: { set: 'memagent', sha256: specs[0]!.sha256 },
      promptRecord: {
        set: 'memagent',
        label: 'MemAgent (paper)',
        answerStyle: 'recurrent',
        file: { sha256: specs[0]!.sha256, source: 'imported recurrent.py' },
      },
      settings: { templates: paper.templates, initialMemory: 'No previous memory' },
    });
    expect(engine.prompts[0]).toMatch(/^Stand-in instruction: /);
    expect(engine.prompts[0]).toContain('<memory>\nNo previous memory\n</memory>');
    const samples = await store.listDatasetSamples(id);
    expect(samples.map((s) => s.scores?.sub_em)).toEqual([1, 1]);

    const boxedId = await e.start({ ...request({ prompts: 'memagent-boxed', templates: undefined, itemsPerFile: 1 }), engineId: 'openai' });
    await finished(boxedId);
    expect((await store.getEvaluation(boxedId))!.dataset).toMatchObject({
      method: 'recurrent-boxed',
      prompts: { set: 'memagent-boxed', sha256: specs[1]!.sha256 },
    });
    expect((await store.listDatasetSamples(boxedId)).map((s) => s.reply)).toEqual([expect.stringContaining('\\boxed{'), expect.stringContaining('\\boxed{')]);
  });

  it("uses this app's wording while MemAgent (paper)'s file has never been had, and records why", async () => {
    const store = await openStore();
    const offline = (async () => {
      throw new TypeError('Failed to fetch');
    }) as unknown as typeof fetch;
    const library = new PromptLibrary(store, { specs: await standinSpecs(), fetch: offline });
    const { evaluator: e, finished } = evaluator(store, new RecordingEngine(tok), library);
    const id = await e.start({ ...request({ prompts: 'auto', templates: undefined, itemsPerFile: 1 }), engineId: 'openai' });
    await finished(id);
    const dataset = (await store.getEvaluation(id))!.dataset!;
    expect(dataset).toMatchObject({ method: 'recurrent-boxed', prompts: { set: 'app', sha256: null } });
    expect(dataset.promptRecord?.note).toMatch(/^MemAgent \(paper\) was not used: .*Failed to fetch/);
    // Named, a set whose file is missing is refused with how to get it, before anything is stored.
    await expect(e.start({ ...request({ prompts: 'memagent', templates: undefined }), engineId: 'openai' })).rejects.toThrow(
      /needs its prompt file.*Import prompt file/,
    );
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
    await second.evaluator.jobs.resume(id);
    await second.finished(id);
    expect((await store.listDatasetSamples(id)).map((s) => s.ordinal)).toEqual([0, 1, 2, 3]);
    expect(second.events.flatMap((ev) => (ev.type === 'sample' ? [ev.ordinal] : []))).toEqual([0, 1, 2, 3].filter((o) => !before.includes(o)));
  });

  it('refuses a file it cannot read whole, leaving nothing stored', async () => {
    const store = await openStore();
    const { evaluator: e } = evaluator(store);
    const broken = new File(['{"context": "a", "input": "b", "answers": ["c"]}\n{"context": "a"'], 'eval_100.jsonl');
    await expect(e.start(request({ files: [...files(), broken] }))).rejects.toThrow(RequestError);
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
