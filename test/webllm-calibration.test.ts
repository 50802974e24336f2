import 'fake-indexeddb/auto';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { modelKey } from '../src/core/estimate';
import type { Tokenizer } from '../src/core/tokenizer';
import { loadQwenTokenizer } from '../src/engines/qwen-tokenizer';
import type { GpuCapability } from '../src/engines/webllm/check/webgpu';
import { CALIBRATION_PROMPT_TOKENS, CALIBRATION_REPLY_TOKENS } from '../src/engines/webllm/check/calibration';
import { GpuSession } from '../src/engines/webllm/gpu-session';
import type { Mlc, StreamChunk } from '../src/engines/webllm/driver/mlc';
import { WebLLMEngine } from '../src/engines/webllm/engine';
import { customEntry, type ModelEntry } from '../src/engines/webllm/models/models';
import { ModelService } from '../src/engines/webllm/manager';
import { modelShelf } from '../src/jobs/model-shelf';
import { type RevisionRecord, type RunRecord, Store } from '../src/storage/db';
import { FakeCaches } from './support/fake-caches';

let tok: Tokenizer;
beforeAll(async () => {
  tok = await loadQwenTokenizer();
});

type Usage = 'with extra' | 'without extra' | 'none';

/** WebLLM's engine in a box: streams a few words a little apart, then the usage chunk WebLLM would send (or none). */
class StubMlc implements Mlc {
  requests: Record<string, unknown>[] = [];
  reloads: string[] = [];
  usage: Usage = 'with extra';
  streamError: Error | undefined;
  words = ['The ', 'weather ', 'was ', 'fine.'];

  reload = async (id: string) => {
    this.reloads.push(id);
  };
  unload = async () => undefined;
  interruptGenerate = () => undefined;
  chat = {
    completions: {
      create: async (request: Record<string, unknown>) => {
        this.requests.push(request);
        return this.stream();
      },
    },
  };

  private async *stream(): AsyncGenerator<StreamChunk> {
    for (const w of this.words) {
      await new Promise((r) => setTimeout(r, 5));
      if (this.streamError) throw this.streamError;
      yield { choices: [{ delta: { content: w }, finish_reason: null }] };
    }
    yield { choices: [{ delta: {}, finish_reason: 'length' }] };
    if (this.usage === 'none') return;
    const usage: NonNullable<StreamChunk['usage']> = { prompt_tokens: 1030, completion_tokens: this.words.length };
    if (this.usage === 'with extra') usage.extra = { prefill_tokens_per_s: 1850, decode_tokens_per_s: 38, time_to_first_token_s: 0.6 };
    yield { choices: [], usage };
  }
}

const ENTRIES = ['Alpha', 'Beta'].map((label) =>
  customEntry({ id: `custom:${label}`, label, modelUrl: `https://hf.example/org/${label}-MLC`, libUrl: 'https://libs.example/test.wasm', contextLimit: 32768 }),
);

function gpu(adapter: string): GpuCapability {
  return { status: 'ok', fallback: false, shaderF16: true, adapter, message: null };
}

let dbCount = 0;

/** A model service over a stand-in GPU session, with the two custom models above stored. */
async function setup(adapter = 'acme rdna9', store?: Store) {
  const mlc = new StubMlc();
  const session = new GpuSession(
    async () => mlc,
    async () => ({ bytesTotal: 0, bytesFetched: 0 }),
  );
  const db = store ?? (await Store.open(`calibration-${++dbCount}`));
  for (const e of ENTRIES) await db.putCustomModel({ id: e.id, label: e.label, modelUrl: e.modelUrl, libUrl: e.libUrl, contextLimit: 32768, addedAt: 1 });
  const entryOf = (id: unknown) => ENTRIES.find((e) => e.id === id)!;
  const service = new ModelService(
    modelShelf(Promise.resolve(db)),
    session,
    async (config) => new WebLLMEngine({ tokenizer: tok, model: entryOf(config?.model), limit: 32768, overhead: 40, gpu: session }),
    async () => gpu(adapter),
  );
  return { mlc, session, store: db, service };
}

const realCaches = globalThis.caches;
afterEach(() => {
  (globalThis as { caches?: CacheStorage }).caches = realCaches;
});

describe('calibrating a WebLLM model', () => {
  it('sends about a thousand prompt tokens, within one prefill pass, and a reply that always runs to its cap, with usage asked for', async () => {
    const { mlc, service } = await setup();
    await service.load('custom:Alpha');
    expect(mlc.requests).toHaveLength(1);
    const request = mlc.requests[0]!;
    expect(request).toMatchObject({ max_tokens: CALIBRATION_REPLY_TOKENS, ignore_eos: true, stream: true, stream_options: { include_usage: true } });
    const prompt = tok.count((request.messages as { content: string }[])[0]!.content);
    expect(prompt).toBeGreaterThanOrEqual(CALIBRATION_PROMPT_TOKENS);
    // With the chat template it must still fit one 1,024-token prefill pass.
    expect(prompt + 40).toBeLessThanOrEqual(1024);
  });

  it('keeps the speeds WebLLM reports, per model and GPU', async () => {
    const { service, store } = await setup();
    const measured = await service.load('custom:Alpha');
    expect(measured).toMatchObject({
      modelId: 'custom:Alpha',
      adapter: 'acme rdna9',
      prefillTokensPerSecond: 1850,
      decodeTokensPerSecond: 38,
      promptTokens: 1030,
      source: 'reported',
    });
    expect(await store.getSpeed('custom:Alpha', 'acme rdna9')).toEqual(measured);
  });

  it('times the stream itself where the usage has no speeds', async () => {
    for (const usage of ['without extra', 'none'] as const) {
      const { mlc, service } = await setup();
      mlc.usage = usage;
      const measured = (await service.load('custom:Alpha'))!;
      expect(measured.source).toBe('timed');
      // Four words about 5 ms apart: three decode steps in roughly 15 ms, the prompt read before the first.
      expect(measured.completionTokens).toBe(4);
      expect(measured.decodeTokensPerSecond).toBeGreaterThan(0);
      expect(measured.decodeTokensPerSecond).toBeLessThan(1000);
      expect(measured.prefillTokensPerSecond).toBeGreaterThan(0);
      // Without a usage chunk, the app's own count of the prompt stands in for WebLLM's.
      expect(measured.promptTokens).toBe(usage === 'none' ? tok.count((mlc.requests[0]!.messages as { content: string }[])[0]!.content) : 1030);
    }
  });

  it('measures once: a second Load of the same model on the same GPU sends nothing', async () => {
    const { mlc, service } = await setup();
    const first = await service.load('custom:Alpha');
    const again = await service.load('custom:Alpha');
    expect(mlc.requests).toHaveLength(1);
    expect(again).toEqual(first);
  });

  it('measures another model, and the same model on another GPU, again', async () => {
    const a = await setup('acme rdna9');
    await a.service.load('custom:Alpha');
    await a.service.load('custom:Beta');
    expect(a.mlc.requests).toHaveLength(2);
    const b = await setup('other gpu', a.store);
    await b.service.load('custom:Alpha');
    expect(b.mlc.requests).toHaveLength(1);
    expect((await a.store.listSpeeds()).map((c) => `${c.modelId} on ${c.adapter}`).sort()).toEqual([
      'custom:Alpha on acme rdna9',
      'custom:Alpha on other gpu',
      'custom:Beta on acme rdna9',
    ]);
  });

  it('a calibration that fails stores nothing and does not fail the load; the next Load tries again', async () => {
    const { mlc, session, service, store } = await setup();
    mlc.streamError = Object.assign(new Error('something broke'), { name: 'Error' });
    await expect(service.load('custom:Alpha')).resolves.toBeUndefined();
    expect(session.current?.id).toBe('custom:Alpha');
    expect(await store.listSpeeds()).toEqual([]);

    mlc.streamError = undefined;
    await expect(service.load('custom:Alpha')).resolves.toMatchObject({ decodeTokensPerSecond: 38 });
  });

  it('the Models list shows the speed measured on this GPU only, and removing a custom model forgets it', async () => {
    (globalThis as { caches?: CacheStorage }).caches = new FakeCaches().asCacheStorage();
    const { service, store } = await setup('acme rdna9');
    await service.load('custom:Alpha');
    await store.putSpeed({ ...(await store.getSpeed('custom:Alpha', 'acme rdna9'))!, modelId: 'custom:Beta', adapter: 'other gpu' });
    const views = (await service.list()).models;
    expect(views.find((m) => m.id === 'custom:Alpha')?.speed).toMatchObject({ prefillTokensPerSecond: 1850, decodeTokensPerSecond: 38 });
    expect(views.find((m) => m.id === 'custom:Beta')?.speed).toBeUndefined();

    await service.removeCustom('custom:Alpha');
    expect(await store.getSpeed('custom:Alpha', 'acme rdna9')).toBeUndefined();
    expect(await store.getSpeed('custom:Beta', 'other gpu')).toBeDefined();
  });
});

describe('a calibration between the steps of a read', () => {
  it('waits for the step on the GPU to finish, and the step streams as it would alone', async () => {
    const { mlc, session, service } = await setup();
    const model: ModelEntry = ENTRIES[0]!;
    const engine = new WebLLMEngine({ tokenizer: tok, model, limit: 32768, overhead: 40, gpu: session });
    const step = engine.generate([{ role: 'user', content: 'Read this.' }], { maxTokens: 128 });
    const load = service.load(model.id);
    const result = await step;
    expect(result.text).toBe('The weather was fine.');
    await load;
    // The step's request went first and carried its own settings, not the calibration's.
    expect(mlc.requests.map((r) => r.max_tokens)).toEqual([128, CALIBRATION_REPLY_TOKENS]);
    expect(mlc.requests[0]!.ignore_eos).toBeUndefined();
  });
});

describe('past steps for an estimate', () => {
  it('come from runs of the same engine and model only, with the speeds and reply sizes they recorded', async () => {
    const store = await Store.open(`calibration-${++dbCount}`);
    const run = (id: string, engineId: string, engineConfig: Record<string, string>): RunRecord => ({
      id,
      documentId: 'doc',
      documentName: 'book.txt',
      question: 'Who?',
      engineId,
      engineConfig,
      settings: { requestedChunkTokens: 5000, chunkTokens: 5000, memoryTokens: 1024, contextTokens: 8192, temperature: 0.7, topP: 0.95 },
      templates: { update: '{problem} {memory} {section}', final: '{problem} {memory}' },
      chunks: [{ start: 0, end: 10, tokens: 5000 }],
      status: 'running',
      nextChunk: 0,
      memory: 'No previous memory',
      createdAt: id.length,
      updatedAt: 0,
    });
    const step = (runId: string, speeds: Partial<RevisionRecord> = {}): RevisionRecord => ({
      runId,
      index: 0,
      memoryTokens: 300,
      wordsAdded: 0,
      wordsRemoved: 0,
      start: 0,
      end: 10,
      chunkTokens: 5000,
      promptTokens: 5600,
      completionTokens: 300,
      ms: 9000,
      finishReason: 'stop',
      retries: 0,
      committedAt: 1,
      ...speeds,
    });
    const runs = [
      run('seven', 'webllm', { model: 'Qwen2.5-7B-Instruct-q4f16_1-MLC' }),
      run('half', 'webllm', { model: 'Qwen2.5-0.5B-Instruct-q4f16_1-MLC' }),
      run('cpu', 'wllama', { modelUrl: 'https://hf.example/qwen-7b.gguf' }),
    ];
    for (const r of runs) {
      await store.createRun(r);
      await store.commitRevision(step(r.id, r.id === 'seven' ? { prefillTokensPerSecond: 1500, decodeTokensPerSecond: 30 } : {}), 'memory');
    }
    expect(await store.recentSteps('webllm', modelKey({ model: 'Qwen2.5-7B-Instruct-q4f16_1-MLC' }))).toEqual([
      { ms: 9000, promptTokens: 5600, completionTokens: 300, prefillTokensPerSecond: 1500, decodeTokensPerSecond: 30 },
    ]);
    expect(await store.recentSteps('webllm', modelKey({ model: 'Qwen2.5-3B-Instruct-q4f16_1-MLC' }))).toEqual([]);
    expect(await store.recentSteps('webllm')).toHaveLength(2);
    store.close();
  });
});
