/**
 * The peer in the GPU benchmark: llama.cpp (node-llama-cpp, the runtime under
 * LM Studio, Ollama and the rest for a local model) on the same machine, with
 * a made-up Qwen2 GGUF at the measured WebLLM library's shapes, timed at the
 * same prompt sizes and the same number of tokens written.
 *
 * Prefill and decode are timed as WebLLM reports them: prefill from the
 * request to the first token (prompt tokens ÷ that time), decode over the
 * tokens after the first. Every token is written, end-of-text or not, so both
 * engines write the same count.
 */
import { existsSync, mkdirSync, readFileSync, statSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { dirname } from 'node:path';
import type { Llama, Token } from 'node-llama-cpp';
import { type Qwen2Shape, writeMadeUpQwen2 } from './qwen2-gguf';

export interface PeerRequest {
  promptTokens: number;
  written: number;
}

export interface PeerFigure extends PeerRequest {
  prefillTokensPerSecond: number;
  decodeTokensPerSecond: number;
  timeToFirstTokenSeconds: number;
}

export type PeerBackend = 'auto' | 'vulkan' | 'cpu';

export interface PeerRecord {
  engine: 'llama.cpp';
  runtime: string;
  /** What llama.cpp ran on: `vulkan`, or `cpu` (the CPU build). */
  backend: string;
  devices: string[];
  threads: number;
  shape: Qwen2Shape;
  gguf: { file: string; bytes: number; writeSeconds: number | null };
  load: { seconds: number; contextSize: number; batchSize: number; gpuLayers: number };
  prompts: PeerFigure[];
  step: PeerFigure;
}

export interface PeerOptions {
  /** The GGUF's path: written there first when missing. */
  gguf: string;
  shape: Qwen2Shape;
  /** Qwen's tokenizer.json, which goes into the GGUF. */
  tokenizer: string;
  /** Text whose tokens make up the prompts. */
  text: string;
  step: PeerRequest;
  prompts: PeerRequest[];
  backend: PeerBackend;
  /** CPU threads; by default 1 on a machine of 2 cores or fewer (more only slows a shared one), else all. */
  threads?: number;
  log(line: string): void;
}

export const NODE_LLAMA_CPP = '3.21.1';
const NODE_LLAMA_CPP_MODULE = 'node-llama-cpp';

/** node-llama-cpp with a prebuilt binary only (never a build or a download): Vulkan where it loads, else the CPU one. */
async function openLlama(backend: PeerBackend, threads: number, log: (line: string) => void): Promise<Llama> {
  let nodeLlamaCpp: typeof import('node-llama-cpp');
  try {
    // A name in a variable: bundlers leave the import alone, so the GPU bundle does not take in llama.cpp.
    nodeLlamaCpp = (await import(NODE_LLAMA_CPP_MODULE)) as typeof import('node-llama-cpp');
  } catch (e) {
    if ((e as { code?: string }).code !== 'ERR_MODULE_NOT_FOUND') throw e;
    throw new Error(
      `llama.cpp (node-llama-cpp) is not here: run the peer from a checkout (npm run bench:gpu -- --peer) or from its own bundle (npm run bench:gpu:peer-bundle).`,
      { cause: e },
    );
  }
  const { getLlama, LlamaLogLevel } = nodeLlamaCpp;
  const common = {
    build: 'never',
    skipDownload: true,
    usePrebuiltBinaries: true,
    progressLogs: false,
    logLevel: LlamaLogLevel.error,
    maxThreads: threads,
  } as const;
  if (backend !== 'cpu') {
    try {
      return await getLlama({ ...common, gpu: 'vulkan' });
    } catch (e) {
      if (backend === 'vulkan') throw new Error(`llama.cpp's Vulkan build did not load: ${(e as Error).message}`, { cause: e });
      // node-llama-cpp offers Vulkan only where it finds a Vulkan loader (libvulkan.so.1) in the library paths.
      log(`llama.cpp's Vulkan build did not load here (${(e as Error).message.split('\n')[0]}: is there a Vulkan loader?); the peer runs on its CPU build.`);
    }
  }
  return getLlama({ ...common, gpu: false });
}

/** `count` tokens of the text, from its middle (past any front matter). */
function promptOf(tokens: readonly Token[], count: number): Token[] {
  if (tokens.length < count) throw new Error(`The text has ${tokens.length} tokens; a prompt of ${count} needs more.`);
  const start = Math.floor((tokens.length - count) / 2);
  return tokens.slice(start, start + count);
}

const round = (n: number, digits = 2) => Number(n.toFixed(digits));

export async function runLlamaPeer(o: PeerOptions): Promise<PeerRecord> {
  const { log } = o;
  let writeSeconds: number | null = null;
  if (!existsSync(o.gguf)) {
    mkdirSync(dirname(o.gguf), { recursive: true });
    const t0 = performance.now();
    const bytes = writeMadeUpQwen2(o.gguf, o.shape, JSON.parse(readFileSync(o.tokenizer, 'utf8')) as Parameters<typeof writeMadeUpQwen2>[2]);
    writeSeconds = round((performance.now() - t0) / 1000);
    log(`Made-up Q4_0 GGUF for llama.cpp: ${(bytes / 2 ** 20).toFixed(0)} MiB written in ${writeSeconds} s.`);
  }
  const threads = o.threads ?? (availableParallelism() <= 2 ? 1 : availableParallelism());
  const llama = await openLlama(o.backend, threads, log);
  try {
    const onGpu = llama.gpu !== false;
    const longest = Math.max(o.step.promptTokens + o.step.written, ...o.prompts.map((p) => p.promptTokens + p.written));
    let t0 = performance.now();
    const model = await llama.loadModel({ modelPath: o.gguf, gpuLayers: onGpu ? 'max' : 0 });
    const context = await model.createContext({ contextSize: longest + 16, threads, sequences: 1 });
    const loadSeconds = (performance.now() - t0) / 1000;
    const devices = onGpu ? await llama.getGpuDeviceNames() : [];
    log(`llama.cpp (${onGpu ? llama.gpu : 'CPU'}${devices.length ? `: ${devices.join(', ')}` : ''}) loaded the GGUF in ${loadSeconds.toFixed(1)} s.`);

    const text = model.tokenize(readFileSync(o.text, 'utf8').replace(/\r\n?/g, '\n'));
    const measure = async (r: PeerRequest): Promise<PeerFigure> => {
      const sequence = context.getSequence();
      try {
        const prompt = promptOf(text, r.promptTokens);
        t0 = performance.now();
        let first = 0;
        let written = 0;
        for await (const token of sequence.evaluate(prompt, { temperature: 0.7, topP: 0.95, seed: 1 })) {
          void token;
          if (++written === 1) first = performance.now();
          if (written >= r.written) break;
        }
        const end = performance.now();
        const ttft = (first - t0) / 1000;
        const figure: PeerFigure = {
          promptTokens: prompt.length,
          written,
          prefillTokensPerSecond: round(prompt.length / ttft),
          decodeTokensPerSecond: written > 1 ? round((written - 1) / ((end - first) / 1000)) : 0,
          timeToFirstTokenSeconds: round(ttft, 3),
        };
        log(
          `llama.cpp, prompt of ${figure.promptTokens} tokens: prefill ${figure.prefillTokensPerSecond} tokens/s, decode ${figure.decodeTokensPerSecond} tokens/s (${written} written).`,
        );
        return figure;
      } finally {
        sequence.dispose();
      }
    };
    const prompts: PeerFigure[] = [];
    for (const p of o.prompts) prompts.push(await measure(p));
    const step = await measure(o.step);
    return {
      engine: 'llama.cpp',
      runtime: `node-llama-cpp ${NODE_LLAMA_CPP}`,
      // A Vulkan build that found no device (or offloaded nothing) still ran on the CPU.
      backend: onGpu && model.gpuLayers > 0 ? String(llama.gpu) : 'cpu',
      devices,
      threads,
      shape: o.shape,
      gguf: { file: o.gguf, bytes: statSync(o.gguf).size, writeSeconds },
      load: { seconds: round(loadSeconds), contextSize: context.contextSize, batchSize: context.batchSize, gpuLayers: model.gpuLayers },
      prompts,
      step,
    };
  } finally {
    await llama.dispose();
  }
}
