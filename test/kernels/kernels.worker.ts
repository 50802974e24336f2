/// <reference lib="webworker" />
/**
 * The app's WebLLM adapter on WebLLM's real runtime, in a worker as in the
 * app: the app's own engine class, downloader, tokenizer loading and memory
 * loop, with WebLLM 0.2.79's MLCEngine injected through the engine's
 * dependency seam (the app ships 0.2.86, whose model libraries cannot be had
 * here). The only instrument is a record of what reaches MLCEngine.
 */
import * as Comlink from 'comlink';
import type { ChatMessage, GenerateResult } from '../../src/core/generation';
import { chunkAll } from '../../src/core/chunker';
import { type AnswerEvent, memoryLoop, type RevisionEvent } from '../../src/core/loop';
import { planBudget } from '../../src/core/budget';
import { type PromptTemplates, templateOverhead } from '../../src/core/prompts';
import { downloadModel, ensureConfigAndTokenizer } from '../../src/engines/webllm/models/model-download';
import { checkWebGPU } from '../../src/engines/webllm/check/webgpu';
import { createWebLLMEngine, type WebLLMEngine } from '../../src/engines/webllm/engine';
import { GpuSession } from '../../src/engines/webllm/gpu-session';
import type { Mlc, MlcFactory } from '../../src/engines/webllm/driver/mlc';
import { type ModelProgress, onModelProgress } from '../../src/engines/webllm/models/models';
import { loadModelTokenizer } from '../../src/engines/webllm/models/tokenizer';
import { fetchTokenizerConfig } from '../../src/engines/webllm/models/tokenizer-config';
import { loadedContextWindow, WEBLLM_0_2_79 } from '../../src/engines/webllm/versions';
import { chatTemplateTokens, type ConvTemplate } from './chat-template';

/** What reached MLCEngine: every engine made, and every request sent to one. */
const engines: { loadedModelIdToChatConfig: Map<string, Record<string, unknown>> }[] = [];
const requests: Record<string, unknown>[] = [];
const progress: ModelProgress[] = [];
onModelProgress((p) => progress.push(p));

const factory: MlcFactory = async (appConfig, onProgress) => {
  const { MLCEngine } = await import('@mlc-ai/web-llm-0279');
  const mlc = new MLCEngine({ appConfig: appConfig as never, initProgressCallback: onProgress, logLevel: 'WARN' });
  const completions = mlc.chat.completions;
  const create = completions.create.bind(completions);
  completions.create = ((request: Record<string, unknown>) => {
    requests.push(structuredClone(request));
    return create(request as never);
  }) as unknown as typeof completions.create;
  engines.push(mlc as unknown as (typeof engines)[number]);
  return mlc as unknown as Mlc;
};

// The test opens its engine with speculative writing off: the self-check's 48 tokens would take an hour here.
const session = new GpuSession(factory, downloadModel, WEBLLM_0_2_79);
let engine: WebLLMEngine | undefined;

function opened(): WebLLMEngine {
  if (!engine) throw new Error('open() first');
  return engine;
}

export interface StepReport {
  /** What the loop yielded: a revision is what the runner stores. */
  events: (Omit<RevisionEvent, 'ms'> | Omit<AnswerEvent, 'ms'>)[];
  /** The loop's error, if it ended with one (AbortError on Pause). */
  error?: { name: string; message: string };
  /** Streamed text as it reached the callback, with when (ms since the step began). */
  pieces: { text: string; at: number }[];
  /** When Pause was pressed (ms since the step began). */
  pausedAt?: number;
  /** Every result the engine returned to the loop, a paused one included. */
  results: GenerateResult[];
  /** The messages of the step's request, as the loop built them. */
  messages: ChatMessage[];
  /** What MLCEngine was asked, as sent. */
  request: Record<string, unknown>;
  /** The app's own count of the messages (its tokenizer), and the chat template's tokens around them. */
  appPromptTokens: number;
  templateTokens: number;
  seconds: number;
}

const api = {
  /**
   * The engine for the model at `modelUrl`, as a run would create it: its config and tokenizer downloaded first.
   * `speculate: false` is the run's engine config with "Speculative writing" turned off.
   */
  async open(modelUrl: string, libUrl: string, options: { speculate?: false } = {}) {
    engine = await createWebLLMEngine(
      { model: 'custom:synthetic', label: 'Synthetic Qwen2.5-0.5B', modelUrl, libUrl, contextLimit: 32768, ...options },
      {
        checkGpu: checkWebGPU,
        models: async () => [],
        metadata: (m) => ensureConfigAndTokenizer(m),
        loadTokenizer: loadModelTokenizer,
        session,
        tokenizerConfig: (m) => fetchTokenizerConfig(m.modelUrl),
      },
    );
    const { model, limit, overhead, contextWindow, systemMessage } = engine;
    return { modelId: model.id, limit, overhead, contextWindow, systemMessage };
  },

  /** The app's download into WebLLM's caches, as Download in Models does. */
  async download() {
    const t0 = performance.now();
    await session.download(opened().model);
    return { seconds: (performance.now() - t0) / 1000, progress: progress.splice(0) };
  },

  /** Plans a run's budget and loads the model as the run's prepare() does; reads back what WebLLM loaded. */
  async prepare(run: { question: string; templates: PromptTemplates; chunkTokens: number; memoryTokens: number }) {
    const e = opened();
    const count = (text: string) => e.tokenizer.count(text);
    const { contextTokens } = planBudget({
      contextWindow: e.contextWindow,
      templateTokens: templateOverhead(run.templates.update, count),
      questionTokens: count(run.question),
      memoryTokens: run.memoryTokens,
      requestedChunkTokens: run.chunkTokens,
    });
    const t0 = performance.now();
    await e.prepare(contextTokens);
    const mlc = engines.at(-1)!;
    const config = mlc.loadedModelIdToChatConfig.get(e.model.id) ?? {};
    return {
      seconds: (performance.now() - t0) / 1000,
      planned: e.windowFor(contextTokens),
      session: session.current,
      readBack: loadedContextWindow(mlc, e.model.id),
      loadedConfig: { context_window_size: config.context_window_size, repetition_penalty: config.repetition_penalty },
      engines: engines.length,
      progress: progress.splice(0),
    };
  },

  /**
   * One memory-update step of the real loop over a one-chunk text, stopped
   * after its first revision (before the answer step). With `pause`, Pause is
   * pressed as the first streamed text arrives.
   */
  async step(input: {
    question: string;
    section: string;
    templates: PromptTemplates;
    memoryTokens: number;
    seed: number;
    pause: boolean;
  }): Promise<StepReport> {
    const e = opened();
    const controller = new AbortController();
    const t0 = performance.now();
    const report: StepReport = { events: [], pieces: [], results: [], messages: [], request: {}, appPromptTokens: 0, templateTokens: 0, seconds: 0 };
    const sentBefore = requests.length;
    const recording = {
      generate: async (messages: readonly ChatMessage[], options: Parameters<WebLLMEngine['generate']>[1]) => {
        report.messages = messages.map((m) => ({ ...m }));
        const result = await e.generate(messages, options);
        report.results.push(structuredClone(result));
        return result;
      },
    };
    const loop = memoryLoop({
      text: input.section,
      chunks: chunkAll(input.section, e.tokenizer, 1000),
      question: input.question,
      generator: recording,
      templates: input.templates,
      memoryTokens: input.memoryTokens,
      sampling: { temperature: 0.7, topP: 0.95, seed: input.seed },
      signal: controller.signal,
      onToken: (text) => {
        report.pieces.push({ text, at: performance.now() - t0 });
        if (input.pause && report.pausedAt === undefined) {
          report.pausedAt = performance.now() - t0;
          controller.abort();
        }
      },
    });
    try {
      for await (const event of loop) {
        const { ms: _ms, ...stored } = event;
        report.events.push(stored);
        if (event.kind === 'revision') break; // the answer step is not part of this test
      }
    } catch (err) {
      report.error = { name: (err as Error).name, message: (err as Error).message };
    }
    report.seconds = (performance.now() - t0) / 1000;
    report.request = requests.slice(sentBefore).at(-1) ?? {};
    const conv = engines.at(-1)!.loadedModelIdToChatConfig.get(e.model.id)?.conv_template as ConvTemplate;
    // Counted over the messages WebLLM was sent: the engine adds the model's system message to the loop's.
    const sent = ((report.request as { messages?: ChatMessage[] }).messages ?? report.messages).map((m) => ({ role: m.role, content: m.content }));
    report.appPromptTokens = sent.reduce((n, m) => n + e.tokenizer.count(m.content), 0);
    report.templateTokens = chatTemplateTokens(conv, sent, (text) => e.tokenizer.count(text));
    return report;
  },
};

export type KernelsApi = typeof api;
Comlink.expose(api);
