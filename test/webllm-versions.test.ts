import { readFileSync } from 'node:fs';
import type { ChatCompletionRequestStreaming } from '@mlc-ai/web-llm';
import { afterEach, describe, expect, it } from 'vitest';
import { ContextWindowExceededError, ContextWindowShortError, fromWire, wireError } from '../src/engines/errors';
import { CACHE_NAMES, downloadModel } from '../src/engines/webllm/models/model-download';
import { explainError } from '../src/engines/webllm/explain-error';
import { GpuSession } from '../src/engines/webllm/gpu-session';
import type { Mlc, StreamChunk } from '../src/engines/webllm/driver/mlc';
import { appConfigFor, customEntry } from '../src/engines/webllm/models/models';
import { loadedContextWindow, SHIPPED_WEBLLM, WEBLLM_0_2_79, WEBLLM_0_2_86, type WebLLMVersion } from '../src/engines/webllm/versions';
import { FakeCaches } from './support/fake-caches';

const MODEL = customEntry({
  id: 'custom:versions',
  label: 'Versions model',
  modelUrl: 'https://hf.example/org/Versions-MLC',
  libUrl: 'https://libs.example/versions.wasm',
  contextLimit: 32768,
});
const base = MODEL.modelUrl;

// Each version's own package: the shipped one, and the alias the real-kernel test runs.
const PACKAGES = [
  { version: WEBLLM_0_2_86, name: '@mlc-ai/web-llm' },
  { version: WEBLLM_0_2_79, name: '@mlc-ai/web-llm-0279' },
] as const;

type WebLLMModule = { hasModelInCache(id: string, appConfig: unknown): Promise<boolean>; MLCEngine: new () => unknown };

/** A host with both names of the weights index, so only the downloader's choice decides what is cached. */
function fetchModel(requests: string[]): typeof fetch {
  const index = JSON.stringify({ records: [0, 1].map((i) => ({ dataPath: `params_shard_${i}.bin`, nbytes: 4 })) });
  const files: Record<string, string | Uint8Array<ArrayBuffer>> = {
    [`${base}mlc-chat-config.json`]: JSON.stringify({ tokenizer_files: ['tokenizer.json'] }),
    [`${base}tokenizer.json`]: JSON.stringify({ model: { type: 'BPE' } }),
    [`${base}tensor-cache.json`]: index,
    [`${base}ndarray-cache.json`]: index,
    [`${base}params_shard_0.bin`]: new Uint8Array(4),
    [`${base}params_shard_1.bin`]: new Uint8Array(4),
    [MODEL.libUrl]: new Uint8Array([0, 97, 115, 109]),
  };
  return (async (input: RequestInfo | URL) => {
    const url = String(input);
    requests.push(url);
    const body = files[url];
    return body === undefined ? new Response('not found', { status: 404 }) : new Response(body);
  }) as typeof fetch;
}

async function download(version: WebLLMVersion, caches: FakeCaches): Promise<string[]> {
  const requests: string[] = [];
  await downloadModel(MODEL, { webllm: version, fetch: fetchModel(requests), caches: caches.asCacheStorage(), estimate: async () => ({}), online: () => true });
  return requests;
}

const globals = globalThis as { caches?: unknown };
afterEach(() => {
  delete globals.caches;
});

describe('WebLLM versions: what the adapter does differently for 0.2.86 (shipped) and 0.2.79 (real-kernel test)', () => {
  it('names the versions that are installed: the shipped dependency and the test alias', () => {
    const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { dependencies: Record<string, string>; devDependencies: Record<string, string> };
    expect(SHIPPED_WEBLLM).toBe(WEBLLM_0_2_86);
    expect(pkg.dependencies['@mlc-ai/web-llm']).toBe(WEBLLM_0_2_86.version);
    expect(pkg.dependencies['@mlc-ai/web-llm-0279']).toBe(`npm:@mlc-ai/web-llm@${WEBLLM_0_2_79.version}`);
    for (const { version, name } of PACKAGES) {
      expect(JSON.parse(readFileSync(`node_modules/${name}/package.json`, 'utf8')).version).toBe(version.version);
    }
  });

  for (const { version, name } of PACKAGES) {
    it(`${version.version}: the app's download leaves ${version.weightsIndex} and every shard where WebLLM's own hasModelInCache finds them`, async () => {
      const webllm = (await import(name)) as WebLLMModule;
      const caches = new FakeCaches();
      const requests = await download(version, caches);
      expect(requests).toContain(`${base}${version.weightsIndex}`);
      expect(caches.keys(CACHE_NAMES.model)).toEqual(
        [`${base}${version.weightsIndex}`, `${base}params_shard_0.bin`, `${base}params_shard_1.bin`, `${base}tokenizer.json`].sort(),
      );
      globals.caches = caches;
      // WebLLM reads the app config's cache fields: the version's own ones keep it on Cache Storage.
      expect(await webllm.hasModelInCache(MODEL.id, appConfigFor(MODEL, version))).toBe(true);
    });
  }

  it('the difference is real: each version misses a model downloaded with the other one’s layout', async () => {
    for (const [{ name }, { version: other }] of [PACKAGES, [...PACKAGES].reverse()] as const) {
      const webllm = (await import(name)) as WebLLMModule;
      const caches = new FakeCaches();
      await download(other, caches);
      globals.caches = caches;
      expect(await webllm.hasModelInCache(MODEL.id, appConfigFor(MODEL, PACKAGES.find((p) => p.name === name)!.version))).toBe(false);
    }
  });

  it('both engines keep loaded models where the adapter reads their context window back', async () => {
    for (const { name } of PACKAGES) {
      const { MLCEngine } = (await import(name)) as WebLLMModule;
      const engine = new MLCEngine() as { loadedModelIdToPipeline: Map<string, unknown> };
      expect(engine.loadedModelIdToPipeline).toBeInstanceOf(Map);
      expect(loadedContextWindow(engine, MODEL.id)).toBeUndefined();
      engine.loadedModelIdToPipeline.set(MODEL.id, { contextWindowSize: 8192 });
      expect(loadedContextWindow(engine, MODEL.id)).toBe(8192);
    }
  });

  it('0.2.86 takes the repetition penalty in each request (a request without the field would not compile)', () => {
    const request: ChatCompletionRequestStreaming = { messages: [{ role: 'user', content: 'q' }], stream: true, repetition_penalty: 1 };
    expect(request.repetition_penalty).toBe(1);
    expect(WEBLLM_0_2_86.requestRepetitionPenalty).toBe(true);
    // 0.2.79's requests have no such field: its sampler reads the model config's, which the load overrides.
    expect(WEBLLM_0_2_79.requestRepetitionPenalty).toBe(false);
  });
});

/** Just enough of MLCEngine to see what a session asks of it; it loads whatever window it is given, or `loads`. */
class RecordingMlc implements Mlc {
  reloads: Record<string, unknown>[] = [];
  requests: Record<string, unknown>[] = [];
  loadedModelIdToPipeline = new Map<string, { contextWindowSize: number }>();
  constructor(
    private readonly loads?: number,
    private readonly usage = { prompt_tokens: 3, completion_tokens: 1 },
  ) {}
  reload = async (id: string, opts: Record<string, unknown> = {}) => {
    this.reloads.push(opts);
    this.loadedModelIdToPipeline.set(id, { contextWindowSize: this.loads ?? (opts.context_window_size as number) });
  };
  unload = async () => this.loadedModelIdToPipeline.clear();
  interruptGenerate = () => undefined;
  chat = {
    completions: {
      create: async (request: Record<string, unknown>) => {
        this.requests.push(request);
        const usage = this.usage;
        return (async function* (): AsyncGenerator<StreamChunk> {
          yield { choices: [{ delta: { content: 'x' }, finish_reason: 'length' }], usage };
        })();
      },
    },
  };
}

function session(version: WebLLMVersion | undefined, mlc: RecordingMlc) {
  const appConfigs: unknown[] = [];
  const downloads: unknown[] = [];
  const s = new GpuSession(
    async (appConfig) => (appConfigs.push(appConfig), mlc),
    async (_model, options) => (downloads.push(options?.webllm), { bytesTotal: 0, bytesFetched: 0 }),
    version,
  );
  return { s, appConfigs, downloads };
}

describe('a GPU session for a WebLLM version', () => {
  it('0.2.86 (the default): Cache Storage by cacheBackend, the window at load, the repetition penalty in the request', async () => {
    const mlc = new RecordingMlc();
    const { s, appConfigs, downloads } = session(undefined, mlc);
    await s.generate(MODEL, 8192, { messages: [{ role: 'user', content: 'q' }], options: { maxTokens: 1 } });
    expect(downloads).toEqual([WEBLLM_0_2_86]);
    expect(appConfigs).toEqual([{ model_list: [{ model: base, model_id: MODEL.id, model_lib: MODEL.libUrl }], cacheBackend: 'cache' }]);
    expect(mlc.reloads).toEqual([{ context_window_size: 8192 }]);
    expect(mlc.requests[0]).toMatchObject({ repetition_penalty: 1 });
  });

  it('0.2.79: Cache Storage by useIndexedDBCache, and the repetition penalty at load, where its sampler reads it', async () => {
    const mlc = new RecordingMlc();
    const { s, appConfigs, downloads } = session(WEBLLM_0_2_79, mlc);
    await s.generate(MODEL, 8192, { messages: [{ role: 'user', content: 'q' }], options: { maxTokens: 1 } });
    expect(downloads).toEqual([WEBLLM_0_2_79]);
    expect(appConfigs).toEqual([{ model_list: [{ model: base, model_id: MODEL.id, model_lib: MODEL.libUrl }], useIndexedDBCache: false }]);
    expect(mlc.reloads).toEqual([{ context_window_size: 8192, repetition_penalty: 1 }]);
  });

  it('counts the tokens written the same way for both: 0.2.79 leaves the prefill’s token out of completion_tokens', async () => {
    for (const [version, reported] of [
      [WEBLLM_0_2_86, 3],
      [WEBLLM_0_2_79, 2],
    ] as const) {
      const mlc = new RecordingMlc(undefined, { prompt_tokens: 12, completion_tokens: reported });
      const result = await session(version, mlc).s.generate(MODEL, 8192, { messages: [{ role: 'user', content: 'q' }], options: { maxTokens: 3 } });
      expect(result.usage).toMatchObject({ promptTokens: 12, completionTokens: 3 });
    }
  });

  it('names the version and its library folder when a model library fails to load', () => {
    const err = explainError(Object.assign(new Error('bad magic'), { name: 'CompileError' }), MODEL, { phase: 'load', window: 8192, webllm: WEBLLM_0_2_79 });
    expect(err.name).toBe('ModelLibraryError');
    expect(err.message).toContain('built for this model and for WebLLM 0.2.79 (mlc-ai/binary-mlc-llm-libs, web-llm-models/v0_2_48)');
  });

  it('passes the app’s own load errors through unchanged, by their class', () => {
    const short = new ContextWindowShortError('WebLLM loaded a smaller window.');
    expect(explainError(short, MODEL, { phase: 'load', window: 8192 })).toBe(short);
    // A WebLLM error of the same name is not the app's: it is explained like any other.
    const foreign = Object.assign(new Error('odd'), { name: 'ContextWindowError' });
    expect(explainError(foreign, MODEL, { phase: 'load', window: 8192 }).message).toBe('WebLLM could not load the model: odd');
  });

  it('records the window read back from the engine, and refuses a load smaller than asked', async () => {
    const roomy = session(undefined, new RecordingMlc(9216));
    await roomy.s.ensure(MODEL, 8192);
    expect(roomy.s.current).toEqual({ id: MODEL.id, window: 9216 });

    const mlc = new RecordingMlc(4096);
    const small = session(undefined, mlc);
    const error = await small.s.ensure(MODEL, 8192).catch((e: unknown) => e);
    expect(error).toMatchObject({
      name: 'ContextWindowError',
      message:
        'WebLLM loaded Versions model with a 4096-token context window instead of the 8192 tokens this run needs. Choose a smaller chunk size or memory size.',
    });
    // A typed engine failure: the context window is too small, and it crosses the worker boundary as one.
    expect(error).toBeInstanceOf(ContextWindowShortError);
    expect(error).toBeInstanceOf(ContextWindowExceededError);
    expect(fromWire(wireError(error))).toMatchObject({ name: 'ContextWindowError', kind: 'context-window' });
    expect(small.s.current).toBeUndefined();
    expect(mlc.loadedModelIdToPipeline.size).toBe(0); // unloaded again
  });
});
