import { afterEach, describe, expect, it } from 'vitest';
import { loadQwenTokenizer } from '../src/engines/qwen-tokenizer';
import { DEFAULT_CHUNK_TOKENS, DEFAULT_MEMORY_TOKENS } from '../src/core/budget';
import { APP_PROMPT_SET, type PromptSet } from '../src/core/prompt-sets';
import { templateOverhead } from '../src/core/prompts';
import type { Tokenizer } from '../src/core/tokenizer';
import type { Engine, EngineConfig } from '../src/engines/engine';
import { kvShape } from '../src/engines/webllm/driver/batch-limit';
import { WebLLMEngine } from '../src/engines/webllm/engine';
import type { GpuSession } from '../src/engines/webllm/gpu-session';
import { customEntry, engineConfigFor, type ModelEntry } from '../src/engines/webllm/models/models';
import { CACHE_NAMES, fileUrls } from '../src/engines/webllm/models/model-download';
import { ModelService, type ModelShelf } from '../src/engines/webllm/manager';
import type { GpuCapability } from '../src/engines/webllm/check/webgpu';
import { FakeCaches } from './support/fake-caches';
import type { BatchSizeRequest } from '../src/agent/protocol';
import { batchSize, type BatchSizeDeps } from '../src/runs/batch-size';
import { planRuns } from '../src/runs/plan';
import { ChunkLists } from '../src/core/chunk-lists';
import { EngineCache } from '../src/jobs/engines';
import { testRunner } from './runner-setup';

const MiB = 1024 ** 2;
/** One token a word: enough to follow what the plan counts. */
const tokenizer = { count: (text: string) => text.split(/\s+/).filter(Boolean).length } as Tokenizer;
/** Qwen2.5-7B as the q4f32_1 library keeps it: 28 layers, 4 KV heads of 128, 32-bit keys and values (112 KiB a token). */
const QWEN_7B = kvShape({ num_hidden_layers: 28, num_key_value_heads: 4, head_dim: 128 }, 'q4f32_1')!;
const OVERHEAD = 40;
const QUESTIONS = ['Who opened the vault?', 'What is the code of the vault on the second floor of the bank?'];
/** The form's defaults, as Read sends them: nothing chosen for the prompt set. */
const FORM: BatchSizeRequest = {
  engineId: 'webllm',
  engineConfig: { model: 'Qwen2.5-7B-Instruct-q4f32_1-MLC' },
  chunkTokens: DEFAULT_CHUNK_TOKENS,
  memoryTokens: DEFAULT_MEMORY_TOKENS,
  prompts: 'auto',
};

/** A GPU session that fails the test if anything is put on the GPU: the size is told without loading the weights. */
function idleGpu() {
  const loads: string[] = [];
  const gpu = {
    batchBlocker: () => undefined,
    ensure: async (model: ModelEntry) => void loads.push(model.id),
    generate: async (model: ModelEntry) => void loads.push(model.id),
    writeBatch: async (model: ModelEntry) => void loads.push(model.id),
  } as unknown as GpuSession;
  return { gpu, loads };
}

/** The 7B model's engine, with its weights' size as the model list gives it and the adapter's largest buffer. */
function engine7B(gpu: GpuSession, maxBufferSize = 2048 * MiB): WebLLMEngine {
  return new WebLLMEngine({
    tokenizer,
    model: { id: 'Qwen2.5-7B-Instruct-q4f32_1-MLC', label: 'Qwen2.5-7B', custom: false } as ModelEntry,
    limit: 32_768,
    overhead: OVERHEAD,
    gpu,
    batchShape: { ...QWEN_7B, weightsBytes: 5900 * MiB },
    adapterLimits: async () => ({ maxBufferSize }),
  });
}

/** The worker's parts, with the engine cache and model check recorded. */
function deps(engine: Engine, lacking: 'gpu' | 'download' | null = null, held?: PromptSet) {
  const opened: string[] = [];
  const checked: (EngineConfig | undefined)[] = [];
  const d: BatchSizeDeps = {
    engines: { open: async (id) => (opened.push(id), engine) },
    lacks: async (config) => (checked.push(config), lacking),
    ...(held && { prompts: { sets: async () => ({ memagent: held }) } }),
  };
  return { deps: d, opened, checked };
}

/** The step a read of QUESTIONS plans at the form's defaults with `update`, plus the chat template: what one sequence holds. */
function stepTokens(update: string): number {
  const longest = Math.max(...QUESTIONS.map((q) => tokenizer.count(q)));
  return DEFAULT_CHUNK_TOKENS + 2 * DEFAULT_MEMORY_TOKENS + templateOverhead(update, tokenizer.count) + longest + OVERHEAD;
}

describe('how many questions the Read form says go together (the worker’s batchSize)', () => {
  it('gives the WebLLM engine’s own size and reason at the step a read of the questions would plan, without loading the model', async () => {
    const { gpu, loads } = idleGpu();
    const { deps: d, opened, checked } = deps(engine7B(gpu));
    const size = await batchSize(d, FORM, QUESTIONS);
    const tokens = stepTokens(APP_PROMPT_SET.templates.update);
    // About 7,200 tokens × 112 KiB ≈ 790 MiB a question; the 5.8 GiB budget (the weights' size again), less WebLLM's own
    // cache of the 8,192-token window it loads (896 MiB), holds six.
    expect(tokens).toBeGreaterThan(7000);
    expect(size).toEqual({
      size: 6,
      reason: `6 questions of ${tokens.toLocaleString('en-US')} tokens fit the 5.8 GiB KV budget of this GPU, less 896 MiB for WebLLM's own cache (112 KiB a token).`,
    });
    expect(opened).toEqual(['webllm']);
    expect(checked).toEqual([FORM.engineConfig]);
    expect(loads).toEqual([]);
  });

  it('asks the engine at the very context a read of the same questions plans', async () => {
    const engine = engine7B(idleGpu().gpu);
    const asked: number[] = [];
    const limit = engine.batchLimit.bind(engine);
    engine.batchLimit = (contextTokens) => (asked.push(contextTokens), limit(contextTokens));
    await batchSize(deps(engine).deps, FORM, QUESTIONS);
    // The library counts the book with the bundled tokenizer; the plan counts with the engine's.
    const { store, library } = await testRunner(engine, await loadQwenTokenizer());
    const doc = await library.ingest('book.txt', new TextEncoder().encode('The vault was opened at dawn. '.repeat(3000)), 'extractive');
    const [run] = await planRuns(
      { store, library, engines: new EngineCache(async () => engine), lists: new ChunkLists() },
      { ...FORM, documentId: doc.id },
      QUESTIONS,
    );
    expect(asked).toEqual([run!.settings.contextTokens]);
  });

  it('plans with the MemAgent (paper) template where that file is held and nothing is chosen, and with the longest question', async () => {
    const memagent: PromptSet = {
      ...APP_PROMPT_SET,
      id: 'memagent',
      templates: { ...APP_PROMPT_SET.templates, update: `${'read this carefully '.repeat(100)}${APP_PROMPT_SET.templates.update}` },
    };
    const { deps: d } = deps(engine7B(idleGpu().gpu), null, memagent);
    const size = await batchSize(d, FORM, QUESTIONS);
    expect(size).toMatchObject({ reason: expect.stringContaining(`of ${stepTokens(memagent.templates.update).toLocaleString('en-US')} tokens`) });
    // This app's wording chosen: the held file is not used.
    const app = await batchSize(d, { ...FORM, prompts: 'app' }, QUESTIONS);
    expect(app).toMatchObject({ reason: expect.stringContaining(`of ${stepTokens(APP_PROMPT_SET.templates.update).toLocaleString('en-US')} tokens`) });
  });

  it('says where the adapter’s largest buffer holds fewer than the budget, as the read’s groups will be', async () => {
    const { deps: d } = deps(engine7B(idleGpu().gpu, 64 * MiB));
    // Each layer's keys and values for one question take about 28 MiB: two fit a 64 MiB buffer.
    expect(await batchSize(d, FORM, [...QUESTIONS, 'A third?'])).toMatchObject({
      size: 2,
      reason: expect.stringMatching(/^2 questions of [\d,]+ tokens fit this GPU's largest buffer \(64 MiB for each layer's keys and values\)\.$/),
    });
  });

  it('waits for the model’s download, or a GPU that runs it, before opening any engine', async () => {
    for (const lacking of ['download', 'gpu'] as const) {
      const { deps: d, opened } = deps(engine7B(idleGpu().gpu), lacking);
      expect(await batchSize(d, FORM, QUESTIONS)).toEqual({ waitsFor: lacking });
      expect(opened).toEqual([]);
    }
  });

  it('is undefined for an engine that does not batch on this device, and for settings a read would refuse', async () => {
    for (const engineId of ['openai', 'wllama', 'extractive']) {
      const { deps: d, opened, checked } = deps(engine7B(idleGpu().gpu));
      expect(await batchSize(d, { ...FORM, engineId }, QUESTIONS)).toBeUndefined();
      expect(opened).toEqual([]);
      expect(checked).toEqual([]);
    }
    const { deps: d } = deps(engine7B(idleGpu().gpu));
    expect(await batchSize(d, { ...FORM, chunkTokens: 12 }, QUESTIONS)).toBeUndefined();
    // A memory of 8,192 tokens is allowed, but beside a question this long it leaves no room for a chunk in the model's window.
    expect(await batchSize(d, { ...FORM, memoryTokens: 8192 }, ['word '.repeat(20_000)])).toBeUndefined();
  });
});

describe('what a WebLLM model lacks before the form can tell its batch size (ModelService.lacks)', () => {
  const MODEL = customEntry({
    id: 'custom:Tiny',
    label: 'Tiny',
    modelUrl: 'https://hf.example/org/Tiny-MLC/resolve/main/',
    libUrl: 'https://libs.example/tiny.wasm',
    contextLimit: 32_768,
  });
  const realCaches = globalThis.caches;
  afterEach(() => {
    (globalThis as { caches?: CacheStorage }).caches = realCaches;
  });

  function service(gpu: Partial<GpuCapability>): ModelService {
    const capability: GpuCapability = { status: 'ok', fallback: false, shaderF16: true, adapter: 'acme', message: null, ...gpu };
    return new ModelService({} as ModelShelf, idleGpu().gpu, undefined, async () => capability);
  }

  /** Every file WebLLM loads the model from, as a finished download leaves them; `leave` one out. */
  async function cacheModel(caches: FakeCaches, leave?: string): Promise<void> {
    const urls = fileUrls(MODEL);
    const put = async (name: string, url: string, body: string) => url !== leave && (await caches.open(name)).put(url, new Response(body));
    await put(CACHE_NAMES.config, urls.config, '{}');
    await put(CACHE_NAMES.wasm, MODEL.libUrl, 'wasm');
    await put(CACHE_NAMES.model, urls.tokenizer, '{}');
    await put(CACHE_NAMES.model, urls.tensorCache, JSON.stringify({ records: [{ dataPath: 'params_shard_0.bin', nbytes: 4 }] }));
    await put(CACHE_NAMES.model, `${MODEL.modelUrl}params_shard_0.bin`, 'abcd');
  }

  it('is nothing once every file is cached, the download until then, and a GPU where none runs the model', async () => {
    const caches = new FakeCaches();
    (globalThis as { caches?: CacheStorage }).caches = caches.asCacheStorage();
    const config = engineConfigFor(MODEL);
    await cacheModel(caches, `${MODEL.modelUrl}params_shard_0.bin`);
    expect(await service({}).lacks(config)).toBe('download');
    await cacheModel(caches);
    expect(await service({}).lacks(config)).toBe(null);
    expect(await service({ status: 'no-adapter', message: 'found no usable GPU' }).lacks(config)).toBe('gpu');
  });
});
