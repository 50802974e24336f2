/**
 * `memagent read --method infmem --engine webllm`: the same read as against a
 * server, its requests continued by the WebLLM engine's raw completions in
 * the chat text of the model's own family. The engine here is a stand-in
 * that answers from a script: InfMem's prompts of about 2K tokens and more
 * would take far too long on a software GPU, and test/webllm-engine.test.ts
 * checks what the real engine's completer sends WebLLM.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { infmemBench, type InfmemBench, readInfmem } from './support/infmem-cli';
import type { CompletionRequest } from '../src/core/infmem/thinking';
import { type InfmemGpuEngine, INFMEM_WEBLLM_WINDOW } from '../src/cli/read-infmem';
import { customEntry, type ModelEntry } from '../src/engines/webllm/models/models';
import { standinKind } from './support/infmem-standins';
import { startOpenAIServer } from './support/openai-server';

let dir: string;
let book: string;
let bench: InfmemBench;

const QUESTION = 'Where was the logbook kept?';

/** Which request a prompt is, by the stand-ins' own words. */
const role = (prompt: string) => standinKind(prompt).role;

/** A planner that stops, a writer that notes the place, and a final answer; a thought first where the request opens one. */
function script(prompt: string): string {
  const thinking = prompt.endsWith('<|im_start|>assistant\n');
  if (thinking) return '<think>\nEnough.\n</think>';
  if (role(prompt) === 'planner') return 'STOP';
  return role(prompt) === 'writer' ? 'The logbook is in the archive.' : 'Therefore, the answer is the archive.';
}

/** A stand-in for the WebLLM engine: the model's entry, a completer that answers from the script, and its loads. */
function standInEngine(model: ModelEntry, systemMessage?: string) {
  const requests: CompletionRequest[] = [];
  const loads: number[] = [];
  const engine: InfmemGpuEngine = {
    model,
    systemMessage,
    completer: {
      complete: async (request) => {
        requests.push(request);
        return { text: script(request.prompt) };
      },
    },
    prepare: async (tokens) => void loads.push(tokens),
  };
  return { engine, requests, loads };
}

function read(args: string[], openGpu?: () => Promise<InfmemGpuEngine>) {
  return readInfmem(bench, [book, '--method', 'infmem', '--early-stop', '2', '-q', QUESTION, '--force', ...args], {
    environment: { ...(openGpu && { openGpu }) },
  });
}

const lib = (file: string) => `https://libs.example/v0_2_86/base/${file}`;
const INFMEM_4B = customEntry({
  id: 'custom:InfMem-4B',
  label: 'InfMem-4B',
  modelUrl: 'https://hf.example/me/InfMem-4B-q4f16_1-MLC',
  libUrl: lib('Qwen3-4B-q4f16_1_cs1k-webgpu.wasm'),
  contextLimit: 32768,
});
const RL_MEMAGENT_7B = customEntry({
  id: 'custom:RL-MemAgent-7B',
  label: 'RL-MemAgent-7B',
  modelUrl: 'https://hf.example/me/RL-MemAgent-7B-q4f16_1-MLC',
  libUrl: lib('Qwen2-7B-Instruct-q4f16_1-ctx4k_cs1k-webgpu.wasm'),
  contextLimit: 32768,
});

beforeAll(async () => {
  bench = await infmemBench('memagent-cli-infmem-webllm-');
  dir = bench.dir;
  book = join(dir, 'book.txt');
  const lines: string[] = [];
  for (let i = 0; i < 600; i++) lines.push(`Day ${i + 1}: the keeper counted ${i % 13} crates of salt at the quay before the tide.`);
  lines.push('The harbour master kept the logbook in the archive under the chapel.');
  writeFileSync(book, lines.join('\n'));
});

afterAll(() => bench.close());

describe('memagent read --method infmem --engine webllm', () => {
  it('with a converted InfMem-4B (a Qwen3 library): sends the engine’s completer the very requests a server is sent, after one load', async () => {
    const server = await startOpenAIServer({ completions: (body) => script(String(body.prompt)) });
    const gpu = standInEngine(INFMEM_4B);
    try {
      const viaServer = await read(['--base-url', server.url, '--model', server.model]);
      const viaWebllm = await read(['--engine', 'webllm', '--model-url', INFMEM_4B.modelUrl, '--model-lib', INFMEM_4B.libUrl], async () => gpu.engine);
      expect([viaServer.code, viaWebllm.code], viaWebllm.stderr).toEqual([0, 0]);
      expect(viaWebllm.stdout).toMatch(/^the archive\n\nSources:\n/);
      expect(viaWebllm.stdout).toBe(viaServer.stdout);
      expect(gpu.requests.map((r) => ({ prompt: r.prompt, max_tokens: r.maxTokens }))).toEqual(
        server.completionBodies.map((b) => ({ prompt: b.prompt, max_tokens: b.max_tokens })),
      );
      expect(gpu.requests.length).toBeGreaterThanOrEqual(4);
      // Qwen3's chat text: no system message where a request has none, thinking opened by the model.
      const writer = gpu.requests.find((r) => role(r.prompt) === 'writer')!.prompt;
      expect(writer.startsWith('<|im_start|>user\n')).toBe(true);
      expect(gpu.loads).toEqual([INFMEM_WEBLLM_WINDOW]);
      expect(viaWebllm.stderr).toMatch(/Qwen3 chat text/);
      expect(viaWebllm.stderr).toMatch(new RegExp(`with ${gpu.requests.length} requests; every step is in `));
    } finally {
      await server.stop();
    }
  }, 120_000);

  it('with a Qwen2.5 model: its default system message where a request has none, and an empty thought with thinking off', async () => {
    const gpu = standInEngine(RL_MEMAGENT_7B, 'You are the model’s own default.');
    const r = await read(['--engine', 'webllm', '--model', 'RL-MemAgent-7B', '--thinking', 'off'], async () => gpu.engine);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/Qwen2\.5 chat text/);
    const prompts = gpu.requests.map((q) => q.prompt);
    const writer = prompts.find((p) => role(p) === 'writer')!;
    const final = prompts.find((p) => role(p) === 'final')!;
    for (const p of [writer, final]) expect(p.startsWith('<|im_start|>system\nYou are the model’s own default.<|im_end|>\n<|im_start|>user\n')).toBe(true);
    // The planner carries its own system message (the tools), not the default.
    const planner = prompts.find((p) => role(p) === 'planner')!;
    expect(planner).toMatch(/^<\|im_start\|>system\n/);
    expect(planner).not.toContain('You are the model’s own default.');
    // Thinking off: one request each, ending where Qwen2.5's template ends the prompt.
    for (const p of prompts) expect(p.endsWith('<|im_start|>assistant\n')).toBe(true);
  }, 120_000);

  it('says what to change for flags that do not go together, before anything is opened', async () => {
    const never = async (): Promise<InfmemGpuEngine> => {
      throw new Error('opened');
    };
    const cases: [string[], RegExp][] = [
      [['--engine', 'wllama'], /not --engine wllama \(wllama runs in the browser only\)/],
      [['--engine', 'webllm', '--base-url', 'http://127.0.0.1:9/v1'], /--engine webllm reads without a server: leave out --base-url/],
      [['--base-url', 'http://127.0.0.1:9/v1', '--model-lib', lib('Qwen3-4B.wasm')], /--model-lib is for --engine webllm/],
      [['--engine', 'webllm', '--speculate', 'on'], /--speculate does not go with --method infmem/],
      [[], /needs --base-url.*--engine webllm/],
    ];
    for (const [args, message] of cases) await expect(read(args, never)).rejects.toThrow(message);
  });
});
