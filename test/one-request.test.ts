import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChatMessage, GenerateOptions } from '../src/core/generation';
import { DEFAULT_TEMPLATES, INITIAL_MEMORY, updatePrompt } from '../src/core/prompts';
import type { Tokenizer } from '../src/core/tokenizer';
import { createOpenAIEngine } from '../src/engines/openai/engine';
import { loadQwenTokenizer } from '../src/engines/qwen-tokenizer';
import { QWEN25_DEFAULT_SYSTEM, templateDefaultSystem, webllmSystemMessage } from '../src/engines/webllm/models/system-message';
import { fetchTokenizerConfig, TOKENIZER_CONFIG_CACHE } from '../src/engines/webllm/models/tokenizer-config';
import { chatOverhead, createWebLLMEngine } from '../src/engines/webllm/engine';
import { GpuSession } from '../src/engines/webllm/gpu-session';
import type { Mlc, StreamChunk } from '../src/engines/webllm/driver/mlc';
import { type WebLLMDeps } from '../src/engines/webllm/resolve';
import { qwenModels } from '../src/engines/webllm/models/models';
import { WllamaEngine } from '../src/engines/wllama/engine';
import { WllamaHost } from '../src/engines/wllama/host';
import { type CompletionChunk, type CompletionParams, type RawParams, type RawReply, type LoadParams, type WllamaRuntime } from '../src/engines/wllama/runtime';
import { FakeCaches } from './support/fake-caches';
import { type OpenAITestServer, startOpenAIServer } from './support/openai-server';
import { runCli } from './support/cli';
import { openGpuEngine } from '../src/cli/gpu-engine';
import { TOKENIZER_PATH } from './support/synthetic-model';

/**
 * A ChatML chat template written for these tests in the way Qwen2.5's
 * tokenizer_config.json writes its own: a default system turn when the
 * conversation has none.
 */
const CHAT_TEMPLATE =
  "{%- if messages[0].role != 'system' %}{{- '<|im_start|>system\\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant.<|im_end|>\\n' }}{%- endif %}" +
  "{%- for m in messages %}{{- '<|im_start|>' + m.role + '\\n' + m.content + '<|im_end|>\\n' }}{%- endfor %}" +
  "{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- endif %}";

/** The step every engine is asked for: the first memory update of a one-chunk book. */
const QUESTION = 'Where did Alice meet Bob?';
const SECTION = 'Alice met Bob at the harbour in 1921, when the ferry came in late.';
const OPTIONS: GenerateOptions = { maxTokens: 1024, temperature: 0.7, topP: 0.95, seed: 7 };
const MESSAGES: ChatMessage[] = [{ role: 'user', content: updatePrompt(DEFAULT_TEMPLATES, QUESTION, INITIAL_MEMORY, SECTION) }];

/** What the model is given: with no system message, the serving side's template inserts the model's default. */
function conversation(messages: readonly ChatMessage[], templateDefault: string): ChatMessage[] {
  return messages[0]?.role === 'system' ? [...messages] : [{ role: 'system', content: templateDefault }, ...messages];
}

/** Sampling as the runtime will apply it, whatever each one calls it. */
function sampling(wire: Record<string, unknown>, runtime: 'server' | 'webllm' | 'llama.cpp') {
  const topK = wire.top_k as number | undefined;
  return {
    maxTokens: wire.max_tokens,
    temperature: wire.temperature,
    topP: wire.top_p,
    seed: wire.seed,
    repetitionPenalty: runtime === 'llama.cpp' ? wire.repeat_penalty : wire.repetition_penalty,
    presencePenalty: wire.presence_penalty,
    frequencyPenalty: wire.frequency_penalty,
    // WebLLM's sampler has neither top-k nor min-p.
    topK: runtime === 'webllm' ? 'none' : topK !== undefined && topK <= 0 ? 'none' : topK,
    minP: runtime === 'webllm' ? 0 : wire.min_p,
  };
}

const NEUTRAL = {
  maxTokens: 1024,
  temperature: 0.7,
  topP: 0.95,
  seed: 7,
  repetitionPenalty: 1,
  presencePenalty: 0,
  frequencyPenalty: 0,
  topK: 'none',
  minP: 0,
};

let tok: Tokenizer;
let server: OpenAITestServer;
let dir: string;
beforeAll(async () => {
  tok = await loadQwenTokenizer();
  server = await startOpenAIServer();
  dir = mkdtempSync(join(tmpdir(), 'memagent-one-request-'));
});
afterAll(async () => {
  await server.stop();
  rmSync(dir, { recursive: true, force: true });
});

class CapturingMlc implements Mlc {
  requests: Record<string, unknown>[] = [];
  reload = async () => undefined;
  unload = async () => undefined;
  interruptGenerate = () => undefined;
  chat = {
    completions: {
      create: async (request: Record<string, unknown>) => {
        this.requests.push(request);
        return (async function* (): AsyncGenerator<StreamChunk> {
          yield { choices: [{ delta: { content: 'noted' }, finish_reason: 'stop' }] };
        })();
      },
    },
  };
}

class CapturingRuntime implements WllamaRuntime {
  requests: CompletionParams[] = [];
  private nCtx = 0;
  async loadModelFromUrl(_url: string, params: LoadParams) {
    this.nCtx = params.n_ctx;
  }
  async loadModel(_files: Blob[], params: LoadParams) {
    this.nCtx = params.n_ctx;
  }
  getLoadedContextInfo() {
    return { n_ctx: this.nCtx, n_ctx_train: 32768, n_vocab: 151936, metadata: { 'general.architecture': 'qwen2', 'tokenizer.ggml.pre': 'qwen2' } };
  }
  getNumThreads() {
    return 1;
  }
  async exit() {}
  async createChatCompletion(options: CompletionParams & { stream: true; onData(chunk: CompletionChunk): void }) {
    this.requests.push(options);
    options.onData({
      choices: [{ delta: { content: 'noted' }, finish_reason: 'stop' }],
      timings: { cache_n: 0, prompt_n: 30, prompt_ms: 1, prompt_per_second: 1, predicted_n: 1, predicted_per_second: 1 },
    });
  }
  async createCompletion(options: RawParams & { stream: false }): Promise<RawReply> {
    this.raw.push(options);
    return { choices: [{ text: 'noted', finish_reason: 'stop' }] };
  }
  raw: RawParams[] = [];
}

const memagentCli = (args: string[]) => runCli(args);

/**
 * Qwen's tokenizer.json with its 256 byte symbols for a vocabulary and no
 * merges: the same pre-tokenizer, normalizer and special tokens, so it passes
 * every check the engine makes, in 6 KB where the whole file is 11 MB, which
 * the engine would read three times (the request holds no token count).
 */
let byteTokenizerJson: string | undefined;
function byteTokenizer(): string {
  if (byteTokenizerJson) return byteTokenizerJson;
  const json = JSON.parse(readFileSync(TOKENIZER_PATH, 'utf8')) as { model: { vocab: Record<string, number>; merges: unknown[] } };
  json.model.vocab = Object.fromEntries(Object.entries(json.model.vocab).filter(([, id]) => id < 256));
  json.model.merges = [];
  return (byteTokenizerJson = JSON.stringify(json));
}

/** Qwen2.5-7B's files where WebLLM's prebuilt list puts them: its config, Qwen's tokenizer, one small shard, a library. */
const qwenHost = (async (input: RequestInfo | URL) => {
  const url = String(input);
  const file = url.split('/').pop()!;
  const json = (v: unknown) => new Response(JSON.stringify(v), { headers: { 'Content-Type': 'application/json' } });
  if (file === 'mlc-chat-config.json') return json({ context_window_size: 32768, quantization: 'q4f16_1', tokenizer_files: ['tokenizer.json'] });
  if (file === 'tokenizer.json') return new Response(byteTokenizer());
  if (file === 'tokenizer_config.json') return json({ chat_template: CHAT_TEMPLATE });
  if (file === 'tensor-cache.json') return json({ records: [{ dataPath: 'params_shard_0.bin', nbytes: 4 }] });
  if (file === 'params_shard_0.bin') return new Response(new Uint8Array(4));
  if (file.endsWith('.wasm')) return new Response(new Uint8Array([0, 97, 115, 109]));
  return new Response('not found', { status: 404 });
}) as typeof fetch;

describe('one request on every engine', () => {
  /**
   * Its limit, 300 s, is one only a hang reaches: the test's time is its work,
   * which grows with the machine's load, not with a fault. Most of it was the
   * command line's WebLLM engine taking Qwen's real tokenizer.json (11 MB)
   * through the app's downloader and reading it three times (checked as JSON,
   * checked for Qwen's split, built by the wasm tokenizer): the host now serves
   * it cut to its byte symbols (byteTokenizer). What is left is WebLLM's
   * bundle, one read of the 11 MB file here and the CLI's own process (tsx,
   * the tokenizer, one read). It once passed 60 s on a loaded machine; no step
   * here waits on a clock, so a run longer than this is stuck, not slow.
   */
  it('WebLLM, llama.cpp, the OpenAI-compatible engine and the CLI (its server and GPU engines) send the same conversation and the same neutral sampling for a step', async () => {
    // OpenAI-compatible server (vLLM): the body as it arrives.
    const openai = await createOpenAIEngine({ baseUrl: server.url }, tok);
    const before = server.chatBodies.length;
    await openai.generate(MESSAGES, OPTIONS);
    const serverBody = server.chatBodies[before]!;

    // The CLI reading a one-chunk book against the same server.
    const book = join(dir, 'book.txt');
    writeFileSync(book, SECTION);
    const cliFrom = server.chatBodies.length;
    const cli = await memagentCli([
      'read',
      book,
      '--question',
      QUESTION,
      '--base-url',
      server.url,
      '--prompts',
      'app',
      '--seed',
      '7',
      '--out',
      join(dir, 'book.jsonl'),
    ]);
    expect(cli.code, cli.stderr).toBe(0);
    const cliBody = server.chatBodies[cliFrom]!;

    // WebLLM, with the model's own tokenizer_config.json.
    const mlc = new CapturingMlc();
    const deps: WebLLMDeps = {
      checkGpu: async () => ({ status: 'ok', fallback: false, shaderF16: true, adapter: 'test gpu', message: null }),
      models: async () =>
        qwenModels([
          {
            model: 'https://hf.example/mlc-ai/Qwen2.5-7B-Instruct-q4f16_1-MLC',
            model_id: 'Qwen2.5-7B-Instruct-q4f16_1-MLC',
            model_lib: 'https://libs.example/7b.wasm',
          },
        ]),
      metadata: async () => ({ config: { context_window_size: 32768, quantization: 'q4f16_1' }, tokenizer: new ArrayBuffer(0) }),
      loadTokenizer: async () => tok,
      session: new GpuSession(
        async () => mlc,
        async () => ({ bytesTotal: 0, bytesFetched: 0 }),
      ),
      tokenizerConfig: async () => ({ chat_template: CHAT_TEMPLATE }),
    };
    const webllm = await createWebLLMEngine({ model: 'Qwen2.5-7B-Instruct-q4f16_1-MLC' }, deps);
    await webllm.generate(MESSAGES, OPTIONS);
    const webllmRequest = mlc.requests[0]!;

    // The command line's WebLLM engine (--engine webllm): Dawn and a cache folder in place of the worker's WebGPU
    // and Cache Storage, the model's files fetched by the app's downloader from its real host's addresses.
    const cliMlc = new CapturingMlc();
    const cliWebllm = await openGpuEngine({ model: 'Qwen2.5-7B-Instruct-q4f16_1-MLC', 'cache-dir': join(dir, 'webllm') }, () => undefined, {
      checkGpu: async () => ({ status: 'ok', fallback: false, shaderF16: true, adapter: 'test gpu', message: null }),
      factory: async () => cliMlc,
      fetch: qwenHost,
    });
    await cliWebllm.generate(MESSAGES, OPTIONS);
    const cliWebllmRequest = cliMlc.requests[0]!;
    delete (globalThis as { caches?: unknown }).caches; // the engine put its cache folder where WebLLM looks

    // llama.cpp (wllama) with a Qwen GGUF: its own template applies.
    const runtime = new CapturingRuntime();
    const wllama = await WllamaEngine.create(
      { modelUrl: 'https://example.org/qwen2.5.gguf', contextTokens: 16384 },
      { newRuntime: async () => runtime, tokenizer: async () => tok, openLocal: async () => [], isolated: false, hardwareConcurrency: 1 },
      new WllamaHost(),
    );
    await wllama.generate(MESSAGES, OPTIONS);
    const llamaParams = runtime.requests.at(-1)! as unknown as Record<string, unknown>;

    // The CLI is the OpenAI-compatible engine: its request is the engine's, byte for byte; and its WebLLM engine is the app's.
    expect(cliBody).toEqual(serverBody);
    expect(cliWebllmRequest).toEqual(webllmRequest);
    // Servers and llama.cpp get no system message; WebLLM gets the model's own default, named.
    expect(serverBody.messages).toEqual(MESSAGES);
    expect(llamaParams.messages).toEqual(MESSAGES);
    expect((webllmRequest.messages as ChatMessage[])[0]).toEqual({ role: 'system', content: QWEN25_DEFAULT_SYSTEM });
    // So the model sees one conversation on every engine.
    const modelDefault = templateDefaultSystem(CHAT_TEMPLATE)!;
    const seen = [serverBody, cliBody, llamaParams, webllmRequest, cliWebllmRequest].map((w) => conversation(w.messages as ChatMessage[], modelDefault));
    for (const s of seen) expect(s).toEqual(seen[0]);
    expect(seen[0]![1]!.content).toContain('<problem> \nWhere did Alice meet Bob?\n</problem>');
    // And the same sampling: temperature and top p as asked, everything else neutral.
    expect(sampling(serverBody, 'server')).toEqual(NEUTRAL);
    expect(sampling(cliBody, 'server')).toEqual(NEUTRAL);
    expect(sampling(webllmRequest, 'webllm')).toEqual(NEUTRAL);
    expect(sampling(llamaParams, 'llama.cpp')).toEqual(NEUTRAL);
    // Where a runtime has a default of its own, the request overrides it explicitly.
    expect(serverBody).toMatchObject({ repetition_penalty: 1, repeat_penalty: 1, top_k: -1, min_p: 0 });
    expect(webllmRequest).toMatchObject({ repetition_penalty: 1 });
    expect(llamaParams).toMatchObject({ top_k: 0, min_p: 0, repeat_penalty: 1 });
  }, 300_000);
});

describe('the system message WebLLM sends', () => {
  it('is the default the model’s own chat template inserts, read from tokenizer_config.json', () => {
    expect(templateDefaultSystem(CHAT_TEMPLATE)).toBe(QWEN25_DEFAULT_SYSTEM);
    // Qwen2's template inserts a shorter default; Qwen3's inserts none; a non-ChatML template cannot be read here.
    expect(
      templateDefaultSystem(
        "{{ '<|im_start|>system\\nYou are a helpful assistant.<|im_end|>\\n' }}{% for m in messages %}{{ '<|im_start|>' + m.role }}{% endfor %}",
      ),
    ).toBe('You are a helpful assistant.');
    expect(templateDefaultSystem("{%- for m in messages %}{{- '<|im_start|>' + m.role + '\\n' + m.content + '<|im_end|>\\n' }}{%- endfor %}")).toBe('');
    expect(templateDefaultSystem('{{ bos_token }}[INST] {{ m.content }} [/INST]')).toBeNull();
  });

  it('falls back to Qwen2.5’s default for Qwen2.5 and MemAgent models when the file cannot be had, else leaves WebLLM’s own', () => {
    expect(webllmSystemMessage({ chat_template: CHAT_TEMPLATE }, { id: 'custom:anything' })).toBe(QWEN25_DEFAULT_SYSTEM);
    expect(webllmSystemMessage(undefined, { id: 'Qwen2.5-0.5B-Instruct-q4f16_1-MLC' })).toBe(QWEN25_DEFAULT_SYSTEM);
    expect(webllmSystemMessage(undefined, { id: 'custom:rl', modelUrl: 'https://hf.example/me/RL-MemAgent-7B-q4f16_1-MLC/resolve/main/' })).toBe(
      QWEN25_DEFAULT_SYSTEM,
    );
    expect(webllmSystemMessage(undefined, { id: 'custom:llama' })).toBeUndefined();
    expect(webllmSystemMessage({ chat_template: [{ name: 'default', template: CHAT_TEMPLATE }] }, { id: 'custom:x' })).toBe(QWEN25_DEFAULT_SYSTEM);
  });

  it('counts the system message it sends in the chat template’s overhead', () => {
    const conv = {
      system_template: '<|im_start|>system\n{system_message}<|im_end|>\n',
      system_message: 'You are a helpful assistant.',
      roles: { user: '<|im_start|>user', assistant: '<|im_start|>assistant' },
    };
    const own = chatOverhead({ conv_template: conv }, tok);
    const sent = chatOverhead({ conv_template: conv }, tok, QWEN25_DEFAULT_SYSTEM);
    expect(sent - own).toBe(tok.count(QWEN25_DEFAULT_SYSTEM) - tok.count(conv.system_message));
  });

  it('reads tokenizer_config.json once, keeps it for offline use, and does without it when it is missing', async () => {
    const caches = new FakeCaches();
    const fetched: string[] = [];
    const online = async (url: string | URL | Request) => {
      fetched.push(String(url));
      return new Response(JSON.stringify({ chat_template: CHAT_TEMPLATE }), { headers: { 'Content-Type': 'application/json' } });
    };
    const model = 'https://hf.example/mlc-ai/Qwen2.5-7B-Instruct-q4f16_1-MLC';
    expect(await fetchTokenizerConfig(model, caches.asCacheStorage(), online as typeof fetch)).toEqual({ chat_template: CHAT_TEMPLATE });
    expect(fetched).toEqual([`${model}/resolve/main/tokenizer_config.json`]);
    const offline = async () => {
      throw new TypeError('Failed to fetch');
    };
    expect(await fetchTokenizerConfig(model, caches.asCacheStorage(), offline as typeof fetch)).toEqual({ chat_template: CHAT_TEMPLATE });
    expect(caches.keys(TOKENIZER_CONFIG_CACHE)).toEqual([`${model}/resolve/main/tokenizer_config.json`]);
    expect(await fetchTokenizerConfig('https://hf.example/other', caches.asCacheStorage(), offline as typeof fetch)).toBeUndefined();
    const missing = async () => new Response('Entry not found', { status: 404 });
    expect(await fetchTokenizerConfig('https://hf.example/other', caches.asCacheStorage(), missing as typeof fetch)).toBeUndefined();
  });
});
