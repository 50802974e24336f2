import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { UsageError } from '../src/cli/flags';
import { engineConfigOf } from '../src/cli/engine';
import { cacheDirOf, gpuConfigOf, ModelList, openGpuEngine, versionOf } from '../src/cli/gpu-engine';
import { CACHE_NAMES, downloadModel } from '../src/engines/webllm/models/model-download';
import { customEntry } from '../src/engines/webllm/models/models';
import { FileCaches } from '../src/engines/webllm/node/file-caches';
import { WEBLLM_0_2_79, WEBLLM_0_2_86 } from '../src/engines/webllm/versions';
import { runCli } from './support/cli';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'memagent-cli-gpu-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function usageError(f: () => unknown): string {
  try {
    f();
  } catch (e) {
    if (e instanceof UsageError) return e.message;
    throw e;
  }
  throw new Error('no usage error');
}

const LIB_0_2_48 = 'https://raw.githubusercontent.com/mlc-ai/binary-mlc-llm-libs/main/web-llm-models/v0_2_48/Qwen2-7B-Instruct-q4f32_1-ctx4k_cs1k-webgpu.wasm';

describe('the command line’s WebLLM flags', () => {
  it('name a prebuilt model (Qwen2.5-7B by default) or a model converted elsewhere, checked before anything is fetched', () => {
    expect(engineConfigOf({ engine: 'webllm' })).toEqual({ id: 'webllm', config: { model: 'Qwen2.5-7B-Instruct-q4f16_1-MLC' }, retry: {} });
    expect(engineConfigOf({ engine: 'webllm', model: 'Qwen2.5-0.5B-Instruct-q4f32_1-MLC' }).config).toEqual({ model: 'Qwen2.5-0.5B-Instruct-q4f32_1-MLC' });
    expect(gpuConfigOf({ 'model-url': 'https://huggingface.co/me/RL-MemAgent-7B-q4f32_1-MLC', 'model-lib': LIB_0_2_48 })).toEqual({
      model: 'custom:RL-MemAgent-7B-q4f32_1-MLC',
      label: 'RL-MemAgent-7B-q4f32_1-MLC',
      modelUrl: 'https://huggingface.co/me/RL-MemAgent-7B-q4f32_1-MLC/resolve/main/',
      libUrl: LIB_0_2_48,
      contextLimit: 32768,
    });
    expect(usageError(() => engineConfigOf({ engine: 'webllm', 'model-url': 'https://huggingface.co/me/M' }))).toMatch(
      /needs both --model-url .* and --model-lib/,
    );
    expect(usageError(() => gpuConfigOf({ 'model-url': 'https://h/m', 'model-lib': 'https://h/lib.js' }))).toMatch(/\.wasm file/);
    expect(usageError(() => gpuConfigOf({ 'model-url': 'https://h/m', 'model-lib': 'https://h/l.wasm', context: '4096' }))).toMatch(
      /^--context \(the context limit\)/,
    );
    expect(usageError(() => engineConfigOf({ engine: 'webllm', webllm: '0.2.50' }))).toBe(
      '--webllm 0.2.50 is not a WebLLM version memagent runs: 0.2.86 or 0.2.79.',
    );
    expect(usageError(() => engineConfigOf({ 'base-url': 'http://s/v1', 'cache-dir': '/tmp/x' }))).toBe('--cache-dir is for --engine webllm.');
  });

  it('refuse a Qwen3 model for MemAgent’s read and evaluation before anything is fetched, pointing at --method infmem', () => {
    expect(usageError(() => engineConfigOf({ engine: 'webllm', model: 'Qwen3-8B-q4f16_1-MLC' }))).toMatch(
      /^Qwen3-8B-q4f16_1-MLC is a Qwen3 model, which reads with InfMem only.*\(memagent read --method infmem --engine webllm\)$/,
    );
    const qwen3Lib = LIB_0_2_48.replace('Qwen2-7B-Instruct-q4f32_1-ctx4k', 'Qwen3-4B-q4f32_1');
    expect(
      usageError(() => engineConfigOf({ engine: 'webllm', model: 'InfMem-4B', 'model-url': 'https://huggingface.co/me/I', 'model-lib': qwen3Lib })),
    ).toMatch(/^InfMem-4B is a Qwen3 model/);
  });

  it('turn speculative writing off with --speculate off, as the app’s setting does; on is the default', () => {
    expect(engineConfigOf({ engine: 'webllm', speculate: 'off' }).config).toEqual({ model: 'Qwen2.5-7B-Instruct-q4f16_1-MLC', speculate: false });
    expect(engineConfigOf({ engine: 'webllm', speculate: 'on' }).config).toEqual({ model: 'Qwen2.5-7B-Instruct-q4f16_1-MLC' });
    expect(usageError(() => engineConfigOf({ engine: 'webllm', speculate: 'no' }))).toBe('--speculate must be on or off, got "no".');
    expect(usageError(() => engineConfigOf({ 'base-url': 'http://s/v1', speculate: 'off' }))).toBe('--speculate is for --engine webllm.');
  });

  it('run the WebLLM the library was built for: --webllm, else the library folder’s, else the app’s', () => {
    expect(versionOf({})).toBe(WEBLLM_0_2_86);
    expect(versionOf({ 'model-lib': LIB_0_2_48 })).toBe(WEBLLM_0_2_79);
    expect(versionOf({ 'model-lib': LIB_0_2_48, webllm: '0.2.86' })).toBe(WEBLLM_0_2_86);
    expect(versionOf({ webllm: '0.2.79' })).toBe(WEBLLM_0_2_79);
    // A converted model fetched for 0.2.79 is read with 0.2.79 again, named by its label alone.
    const kept = {
      id: 'custom:RL',
      label: 'RL',
      modelUrl: 'https://h/RL/resolve/main/',
      libUrl: 'https://h/l.wasm',
      webllm: '0.2.79',
      custom: true,
      addedAt: '',
    };
    expect(versionOf({ model: 'RL' }, [kept])).toBe(WEBLLM_0_2_79);
    expect(versionOf({ model: 'Qwen2.5-0.5B-Instruct-q4f32_1-MLC' }, [kept])).toBe(WEBLLM_0_2_86);
  });

  it('keep models in --cache-dir, MEMAGENT_CACHE_DIR, or the user’s cache folder', () => {
    expect(cacheDirOf({ 'cache-dir': '/a' }, { MEMAGENT_CACHE_DIR: '/b' })).toBe('/a');
    expect(cacheDirOf({}, { MEMAGENT_CACHE_DIR: '/b' })).toBe('/b');
    if (process.platform === 'linux') expect(cacheDirOf({}, { XDG_CACHE_HOME: '/c' })).toBe('/c/memagent/webllm');
  });
});

describe('--engine webllm where there is no GPU', () => {
  it('says so, suggests another engine, and fetches nothing', async () => {
    const fetched: string[] = [];
    const engine = openGpuEngine({ 'cache-dir': dir }, () => undefined, {
      checkGpu: async () => ({ status: 'no-adapter', fallback: false, shaderF16: false, adapter: '', message: 'No GPU adapter: none here.' }),
      fetch: (async (url: string) => {
        fetched.push(url);
        return new Response('', { status: 404 });
      }) as unknown as typeof fetch,
    });
    await expect(engine).rejects.toThrow('No GPU adapter: none here.');
    expect(fetched).toEqual([]);
    expect(readdirSync(dir)).toEqual([]);
  });

  it('in a real process whose Dawn finds no Vulkan driver: exit 1, the reason, and what to use instead', async () => {
    const book = join(dir, 'book.txt');
    writeFileSync(book, 'Ada won the race.');
    const cache = join(dir, 'cache');
    const read = await runCli(['read', book, '--question', 'Who won?', '--engine', 'webllm', '--out', join(dir, 'book.jsonl')], {
      env: { VK_ICD_FILENAMES: join(dir, 'no-driver.json'), MEMAGENT_DAWN_FLAGS: 'backend=vulkan', MEMAGENT_CACHE_DIR: cache },
    });
    expect(read.code).toBe(1);
    expect(read.stderr).toMatch(/No GPU adapter: WebGPU for node \(Dawn\) found no GPU it can use through Vulkan/);
    expect(read.stderr).toMatch(/--engine openai --base-url URL.*llama\.cpp engine/);
    expect(existsSync(join(cache, 'models.json'))).toBe(false);
  }, 120_000);
});

describe('memagent models', () => {
  const shared = 'https://libs.example/Qwen2-7B.wasm';
  const models = [
    customEntry({ id: 'custom:A', label: 'A', modelUrl: 'https://hf.example/me/A-MLC', libUrl: shared, contextLimit: 32768 }),
    customEntry({ id: 'custom:B', label: 'B', modelUrl: 'https://hf.example/me/B-MLC', libUrl: shared, contextLimit: 32768 }),
  ];

  /** Both models downloaded by the app's downloader into the folder, as --engine webllm leaves them. */
  async function fill(): Promise<FileCaches> {
    const caches = new FileCaches(dir);
    const fetchFn = (async (input: RequestInfo | URL) => {
      const url = String(input);
      if (url === shared) return new Response(new Uint8Array([0, 97, 115, 109]));
      if (url.endsWith('mlc-chat-config.json')) return new Response(JSON.stringify({ tokenizer_files: ['tokenizer.json'] }));
      if (url.endsWith('tokenizer.json')) return new Response(JSON.stringify({ model: {} }));
      if (url.endsWith('tensor-cache.json')) return new Response(JSON.stringify({ records: [{ dataPath: 'params_shard_0.bin', nbytes: 2048 }] }));
      if (url.endsWith('params_shard_0.bin')) return new Response(new Uint8Array(2048));
      return new Response('', { status: 404 });
    }) as typeof fetch;
    const list = new ModelList(dir);
    for (const m of models) {
      await downloadModel(m, { caches: caches.asCacheStorage(), fetch: fetchFn, online: () => true });
      list.remember(m, WEBLLM_0_2_86);
    }
    return caches;
  }

  it('lists what is downloaded, deletes one model and keeps the library the other still uses', async () => {
    const caches = await fill();
    const env = { MEMAGENT_CACHE_DIR: dir };
    const listed = await runCli(['models'], { env });
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toContain(`Models in ${dir}:`);
    expect(listed.stdout).toMatch(/custom:A {2}0\.0 MB, downloaded; WebLLM 0\.2\.86/);
    expect(listed.stdout).toMatch(/custom:B .*downloaded/);

    const deleted = await runCli(['models', 'delete', 'custom:A'], { env });
    expect(deleted.code, deleted.stderr).toBe(0);
    expect(deleted.stdout).toMatch(/^Deleted custom:A \(\d+ files\); its library stays, another model uses it\./);
    const keys = async (name: string) => (await (await caches.open(name)).keys()).map((r) => r.url);
    expect((await keys(CACHE_NAMES.model)).some((u) => u.includes('/A-MLC/'))).toBe(false);
    expect((await keys(CACHE_NAMES.model)).some((u) => u.includes('/B-MLC/'))).toBe(true);
    expect(await keys(CACHE_NAMES.wasm)).toEqual([shared]);
    expect(new ModelList(dir).all().map((m) => m.id)).toEqual(['custom:B']);

    // A model converted elsewhere is named by its label too.
    expect((await runCli(['models', 'delete', 'B'], { env })).stdout).toMatch(/^Deleted custom:B \(\d+ files\)\.$/m);
    expect(await keys(CACHE_NAMES.wasm)).toEqual([]);
    const gone = await runCli(['models', 'delete', 'custom:B'], { env });
    expect(gone.code).toBe(2);
    expect(gone.stderr).toMatch(/There is no model "custom:B"/);
  }, 60_000);
});
