/**
 * The GPU benchmark: WebLLM's real MLCEngine and kernels on this machine's
 * GPU (Dawn for node), driven by the app's own WebLLM engine, GPU session,
 * downloader, tokenizer, budget planner and memory loop. The weights are made
 * up from the model library's metadata (made-up-model.ts) and put into the
 * folder-backed cache by the app's downloader, as a download fills Cache
 * Storage in the browser; WebLLM loads them from there.
 *
 * Measured: load time; prefill and decode speed at MemAgent's step shape and
 * at a series of prompt sizes; one whole step of the memory loop, and how
 * much of it is spent outside WebLLM; the GPU memory WebLLM allocated; and
 * decode speed beside the limit the device's memory bandwidth sets.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { planBudget } from '../../src/core/budget';
import { chunkAll } from '../../src/core/chunker';
import type { ChatMessage, GenerateOptions, GenerateResult } from '../../src/core/generation';
import { memoryLoop } from '../../src/core/loop';
import { DEFAULT_TEMPLATES, type PromptTemplates, templateOverhead } from '../../src/core/prompts';
import type { Tokenizer } from '../../src/core/tokenizer';
import { createWebLLMEngine, type WebLLMEngine } from '../../src/engines/webllm/engine';
import { madeUpModel } from '../../src/engines/webllm/models/made-up-model';
import { onModelProgress } from '../../src/engines/webllm/models/models';
import type { TokenizerConfigLike } from '../../src/engines/webllm/models/system-message';
import { type AdapterReport, checkNodeGpu, dawnFlags, describeAdapter, openDawn } from '../../src/engines/webllm/node/dawn';
import { NodeWebLLM } from '../../src/engines/webllm/node/runtime';
import { nodeMlcFactory, type WebLLMModule } from '../../src/engines/webllm/node/webllm-module';
import type { WebLLMVersion } from '../../src/engines/webllm/versions';
import { type Bandwidth, bytesPerDecodeStep, decodeLimit, deviceBandwidth } from './bandwidth';
import { type BenchOptions, type BenchSampling, benchSampling, BenchUsageError, type Shape, shapeOf } from './options';
import { describeSpeculation, describeSuite, measureSpeculation, parseSpeculate, type SpeculationRecord } from './speculate';
import { type BatchRecord, describeBatch, measureBatch, measureSuiteBatches } from './batch';
import { chooseRuntime } from './runtime-choice';
import { startCpuProfile } from './cpu-profile';
import { compareFeatures, type DawnTogglesReport, toggleFlags } from './dawn-toggles';
import { KernelClock } from './kernel-clock';
import { NaNLogitsError, type RequestTimes, RuntimeProbe } from './probe';
import { describeTimes } from './describe-times';

/** A section, a memory and a question of a few tokens each, for a software GPU. */
const TINY_TEMPLATES: PromptTemplates = { update: '{problem}\n{memory}\n{section}', final: '{problem}\n{memory}' };
const QUESTION = { app: 'What becomes of Victor Frankenstein and the creature he made?', tiny: 'Who?' };
const MODEL_ID = 'custom:made-up-qwen2.5';
/** The suite's questions: a prompt of this many tokens of the book after the question, up to this many written. */
const SUITE_BATCH_PROMPT = 512;
const SUITE_BATCH_WRITE = 32;

export interface BenchEnvironment {
  /** WebLLM's module, as this build loads it (the installed package, or the one bundled). */
  load(version: WebLLMVersion): Promise<WebLLMModule>;
  /** dawn.node, where it is not the installed package's. */
  dawnAddon?: string;
  /** Progress, on stderr. */
  log(line: string): void;
}

export interface PromptFigure {
  promptTokens: number;
  written: number;
  prefillTokensPerSecond: number;
  decodeTokensPerSecond: number;
  source: 'reported' | 'timed';
  /** Where the request's time went (probe.ts). */
  times?: RequestTimes;
}

export interface StepFigure {
  chunkTokens: number;
  memoryTokens: number;
  promptTokens: number;
  written: number;
  finishReason: string;
  /** The step as the loop timed it: prompt built, request sent, reply streamed, memory kept. */
  seconds: number;
  /** Of which WebLLM's request took this long (from sending it to its last token). */
  engineSeconds: number;
  /** The rest: the app's own work in the step (prompt, token counts, memory), in milliseconds. */
  outsideMs: number;
  prefillTokensPerSecond?: number;
  decodeTokensPerSecond?: number;
  timeToFirstTokenSeconds?: number;
  times?: RequestTimes;
}

export interface BenchRecord {
  kind: 'memagent-gpu-bench';
  when: string;
  node: string;
  platform: string;
  webllm: string;
  adapter: AdapterReport;
  dawn: DawnTogglesReport;
  size: 'paper' | 'tiny';
  shape: Shape;
  library: { file: string; bytes: number; sha256: string; modelType: string; quantization: string; weightBytes: number };
  cache: { dir: string; seconds: number; bytesWritten: number };
  load: { seconds: number; window: number };
  prompts: PromptFigure[];
  step: StepFigure;
  memory: { afterLoadBytes: number; peakBytes: number };
  bandwidth: (Bandwidth & { decodeLimitTokensPerSecond: number; shareOfLimit: number }) | null;
  /** With --speculate: the step's prompt written plainly and speculatively at temperature 0. */
  speculation?: SpeculationRecord;
  /** With --suite: the table of the plain step beside each mode is printed. */
  suite?: boolean;
  /** With --questions N: the step for N questions written one after another and as one batch. */
  batch?: BatchRecord;
  /** With --suite: 1, 2 and 4 questions of a shorter prompt, one after another and batched, greedy and sampled. */
  batches?: BatchRecord[];
  /** The V8 CPU profile of the measured part (prompts and step), where one was asked for. */
  cpuProfile?: string;
}

/** Serves the made-up model's files to the app's downloader, as a model host would; nothing leaves the process. */
function madeUpHost(files: Map<string, () => Uint8Array<ArrayBuffer> | undefined>): typeof fetch {
  return (async (input: RequestInfo | URL) => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    const body = files.get(url)?.();
    if (!body) return new Response('not found', { status: 404 });
    return new Response(body, { headers: { 'Content-Length': String(body.byteLength), 'Content-Type': 'application/octet-stream' } });
  }) as typeof fetch;
}

/** A user message of about `tokens` tokens of the book, for the prompt series. */
function promptOf(book: string, tokenizer: Tokenizer, tokens: number): ChatMessage[] {
  const chunks = chunkAll(book, tokenizer, tokens);
  const span = chunks[1] ?? chunks[0]!;
  return [{ role: 'user', content: span.text ?? book.slice(span.start, span.end) }];
}

function round(n: number | undefined, digits = 2): number | undefined {
  return n === undefined ? undefined : Number(n.toFixed(digits));
}

const MiB = 1024 * 1024;

export async function runGpuBench(o: BenchOptions, env: BenchEnvironment): Promise<BenchRecord> {
  const { log } = env;
  const speculate = parseSpeculate(o.speculate);
  if (!existsSync(o.library)) throw new BenchUsageError(`There is no model library at ${o.library}.`);
  const library = new Uint8Array(readFileSync(o.library));
  const version = chooseRuntime(o.library, library, o.webllm);

  const toggles = toggleFlags(o.dawnToggles ?? []);
  const baseFlags = dawnFlags();
  const flags = [...baseFlags, ...toggles.flags];
  const capability = await checkNodeGpu(() => openDawn({ ...(env.dawnAddon && { addon: env.dawnAddon }), flags }));
  if (capability.status !== 'ok' || !capability.dawn) throw new Error(capability.message ?? 'No GPU adapter.');
  const dawn = capability.dawn;
  // Before WebLLM asks for its device: the device then gets timestamp-query where the adapter offers it.
  const clock = KernelClock.install();
  const adapter = (await describeAdapter(dawn.gpu))!;
  const dawnReport = await compareFeatures({ flags, enabled: toggles.enabled, disabled: toggles.disabled }, baseFlags, adapter, env.dawnAddon);
  if (toggles.flags.length)
    log(`Dawn toggles: ${flags.join(' ')}; features gained: ${dawnReport.gained?.join(', ') || 'none'}, lost: ${dawnReport.lost?.join(', ') || 'none'}.`);
  const size = o.size === 'auto' ? (capability.fallback ? 'tiny' : 'paper') : o.size;
  const shape = shapeOf(size, o.shape);
  log(`Adapter: ${capability.adapter}${capability.fallback ? ' (a software adapter)' : ''}; ${size} size; WebLLM ${version.version}.`);

  const sha256 = createHash('sha256').update(library).digest('hex');
  const tokenizerConfig = join(dirname(o.tokenizer), 'tokenizer_config.json');
  // Tiny steps add nothing around the prompt, where each token takes seconds: a bare conversation template, and
  // Qwen3's tokenizer_config.json, which adds no system message. Full ones use ChatML and send Qwen2.5's default
  // system message, as a real step does. The system message is given to the engine, never cached.
  const tiny = shape.templates === 'tiny';
  const ownTemplate = tiny && existsSync(tokenizerConfig) ? (JSON.parse(readFileSync(tokenizerConfig, 'utf8')) as TokenizerConfigLike) : undefined;
  const model = madeUpModel(library, { json: new Uint8Array(readFileSync(o.tokenizer)) }, tiny ? { template: 'bare' } : {});
  // A made-up host name: a request that missed the cache would fail rather than reach a network. The path names
  // the weights' kind and the template, so that a cache folder holding an earlier kind of made-up weights, or the
  // other size's configuration, is not read for these.
  const base = `https://made-up.invalid/${sha256.slice(0, 16)}/f16-safe/${tiny ? 'bare/' : ''}`;
  const modelUrl = `${base}resolve/main/`;
  const libUrl = `${base}lib/${basename(o.library)}`;
  const files = new Map<string, () => Uint8Array<ArrayBuffer> | undefined>([[libUrl, () => library]]);
  for (const path of ['mlc-chat-config.json', 'tokenizer.json', version.weightsIndex, ...model.index.records.map((r) => r.dataPath)]) {
    files.set(modelUrl + path, () => model.file(path));
  }
  let bytesWritten = 0;
  const host = madeUpHost(files);
  const counting: typeof fetch = async (input, init) => {
    const res = await host(input, init);
    bytesWritten += Number(res.headers.get('content-length') ?? 0);
    return res;
  };

  const probe = new RuntimeProbe(version, clock);
  const runtime = new NodeWebLLM({
    cacheDir: o.cacheDir,
    version,
    load: env.load,
    checkGpu: async () => capability,
    fetch: counting,
    factory: probe.factory(nodeMlcFactory(version, env.load)),
  });
  let shown = '';
  const stopWatching = onModelProgress((p) => {
    const line = `${p.phase}: ${p.text}`;
    if (line !== shown && (p.state !== 'working' || /GPU shader modules\[\d*0\/|Downloaded \d+ of/.test(p.text))) log((shown = line));
  });
  try {
    const engine: WebLLMEngine = await createWebLLMEngine(
      // The step is written plainly; --speculate writes it speculatively beside it.
      { model: MODEL_ID, label: `made-up ${model.meta.model_type} ${model.meta.quantization}`, modelUrl, libUrl, contextLimit: 32768, speculate: false },
      { ...runtime.deps(async () => []), tokenizerConfig: async () => ownTemplate },
    );
    const tokenizer = engine.tokenizer;
    const count = (text: string) => tokenizer.count(text);

    let t0 = performance.now();
    await runtime.session.download(engine.model);
    const cacheSeconds = (performance.now() - t0) / 1000;
    log(
      `Made-up weights in the cache: ${(model.index.metadata.ParamBytes / MiB).toFixed(0)} MiB (${cacheSeconds.toFixed(1)} s; ${(bytesWritten / MiB).toFixed(0)} MiB written now).`,
    );

    const templates = tiny ? TINY_TEMPLATES : DEFAULT_TEMPLATES;
    const question = tiny ? QUESTION.tiny : QUESTION.app;
    const budget = planBudget({
      contextWindow: engine.contextWindow,
      templateTokens: templateOverhead(templates.update, count),
      questionTokens: count(question),
      memoryTokens: shape.memory,
      outputTokens: shape.write,
      requestedChunkTokens: shape.chunk,
    });
    const contextTokens = Math.max(budget.contextTokens, ...shape.prompts.map((p) => p + shape.promptWrite));
    t0 = performance.now();
    await engine.prepare(contextTokens);
    const loadSeconds = (performance.now() - t0) / 1000;
    const window = runtime.session.current!.window;
    const afterLoad = dawn.memory.live;
    log(`Loaded in ${loadSeconds.toFixed(1)} s with a ${window}-token window; GPU buffers ${(afterLoad / MiB).toFixed(0)} MiB.`);

    const book = readFileSync(o.text, 'utf8').replace(/\r\n?/g, '\n');
    const prompts: PromptFigure[] = [];
    const stopProfile = o.cpuProfile ? await startCpuProfile(o.cpuProfile) : undefined;
    let step: StepFigure;
    let messages: readonly ChatMessage[];
    let stepResult: GenerateResult;
    let stepTokens: number[];
    try {
      for (const tokens of shape.prompts) {
        const messages = promptOf(book, tokenizer, tokens);
        probe.begin();
        const m = await runtime.session.calibrate(engine.model, window, { messages, maxTokens: shape.promptWrite, countedPrompt: tokens });
        prompts.push({
          promptTokens: m.promptTokens,
          written: m.completionTokens,
          prefillTokensPerSecond: round(m.prefillTokensPerSecond)!,
          decodeTokensPerSecond: round(m.decodeTokensPerSecond)!,
          source: m.source,
          times: await probe.end(),
        });
        log(
          `Prompt of ${m.promptTokens} tokens: prefill ${m.prefillTokensPerSecond.toFixed(2)} tokens/s, decode ${m.decodeTokensPerSecond.toFixed(2)} tokens/s.`,
        );
      }
      probe.begin();
      // The suite's step is written with the modes' sampling (temperature 0 unless given): the plain reply that
      // speculative writing is compared with, written once; so is a step asked several questions, whose first
      // question's reply one by one it is.
      const sampling = o.suite || o.questions ? benchSampling(o) : { ...benchSampling(o), temperature: o.temperature ?? 0.7 };
      ({ step, messages, result: stepResult } = await oneStep(engine, book, { shape, templates, question, sampling }));
      stepTokens = [...runtime.session.lastTokens];
      step.times = await probe.end();
      log(`One step: ${step.promptTokens} tokens read, ${step.written} written, ${step.seconds.toFixed(1)} s.`);
    } catch (e) {
      if (e instanceof Error && e.name === 'NaNLogitsError') {
        // What was measured so far, and the NaN, in the record; then the run ends saying so.
        const partial = {
          kind: 'memagent-gpu-bench',
          when: new Date().toISOString(),
          webllm: version.version,
          adapter,
          dawn: dawnReport,
          library: basename(o.library),
          load: { seconds: round(loadSeconds), window },
          prompts,
          nanLogits: e.message,
        };
        mkdirSync(dirname(o.out), { recursive: true });
        writeFileSync(o.out, `${JSON.stringify(partial, null, 2)}\n`);
        throw new NaNLogitsError(`NaN logits: ${e.message.replace(/^WebLLM failed while writing: /, '')} (record: ${o.out})`);
      }
      throw e;
    } finally {
      await stopProfile?.();
    }

    const stepReply = { tokens: stepTokens, result: stepResult, seconds: step.engineSeconds };
    const maxTokens = Math.max(shape.write, 3);
    const speculation = speculate.length
      ? await measureSpeculation(
          { session: runtime.session, model: engine.model, window, ...(engine.systemMessage !== undefined && { system: engine.systemMessage }), log },
          {
            messages,
            // A tiny step writes too few tokens for a pass to verify a draft: three give one pass room for two.
            maxTokens,
            // The step was written with the modes' sampling and seed (the suite, --questions): it is their plain reply.
            ...((o.suite || o.questions) && maxTokens === shape.write && { plain: stepReply }),
            modes: speculate,
            ...(o.draft !== undefined && { draft: o.draft }),
            verifyKs: tiny ? [2] : [1, 2, 4, 8, 16, 32],
            sampling: benchSampling(o),
          },
        )
      : undefined;

    const batch = o.questions
      ? await measureBatch(
          { session: runtime.session, model: engine.model, window, ...(engine.systemMessage !== undefined && { system: engine.systemMessage }), log },
          {
            messages,
            question: tiny ? QUESTION.tiny : QUESTION.app,
            questions: o.questions,
            maxTokens: shape.write,
            ...(speculate[0] && { mode: speculate[0] }),
            ...(o.draft !== undefined && { draft: o.draft }),
            sampling: benchSampling(o),
            first: stepReply,
          },
        )
      : undefined;

    const batches = o.suite
      ? await measureSuiteBatches(
          { session: runtime.session, model: engine.model, window, ...(engine.systemMessage !== undefined && { system: engine.systemMessage }), log },
          {
            // A shorter prompt than the step's, so that the seven replies one by one and three batches, twice, fit the suite's minutes.
            messages: tiny ? messages : [{ role: 'user', content: `${question}\n\n${promptOf(book, tokenizer, SUITE_BATCH_PROMPT)[0]!.content}` }],
            question,
            maxTokens: Math.min(shape.write, SUITE_BATCH_WRITE),
            ...(speculate[0] && { mode: speculate[0] }),
            ...(o.draft !== undefined && { draft: o.draft }),
            seed: benchSampling(o).seed,
          },
        )
      : undefined;

    const weights = bytesPerDecodeStep(model.meta, 0).weights;
    const bandwidth = deviceBandwidth(`${adapter.description} ${adapter.device}`, o.bandwidthGbps);
    const limit = bandwidth ? decodeLimit(model.meta, step.promptTokens + step.written / 2, bandwidth) : undefined;
    const record: BenchRecord = {
      kind: 'memagent-gpu-bench',
      when: new Date().toISOString(),
      node: process.version,
      platform: `${process.platform}-${process.arch}`,
      webllm: version.version,
      adapter,
      dawn: dawnReport,
      size,
      ...(o.suite && { suite: true }),
      shape,
      library: {
        file: basename(o.library),
        bytes: library.byteLength,
        sha256,
        modelType: model.meta.model_type,
        quantization: model.meta.quantization,
        weightBytes: weights,
      },
      cache: { dir: o.cacheDir, seconds: round(cacheSeconds)!, bytesWritten },
      load: { seconds: round(loadSeconds)!, window },
      prompts,
      step,
      memory: { afterLoadBytes: afterLoad, peakBytes: dawn.memory.peak },
      bandwidth:
        bandwidth && limit
          ? {
              ...bandwidth,
              decodeLimitTokensPerSecond: round(limit, 1)!,
              shareOfLimit: round((step.decodeTokensPerSecond ?? 0) / limit, 4)!,
            }
          : null,
      ...(speculation && { speculation }),
      ...(batch && { batch }),
      ...(batches && { batches }),
      ...(o.cpuProfile && { cpuProfile: o.cpuProfile }),
    };
    mkdirSync(dirname(o.out), { recursive: true });
    writeFileSync(o.out, `${JSON.stringify(record, null, 2)}\n`);
    return record;
  } finally {
    stopWatching();
  }
}

/** One memory update of the real loop at the shape's sizes: a chunk of the book, a memory of book text, the reply capped. */
async function oneStep(
  engine: WebLLMEngine,
  book: string,
  { shape, templates, question, sampling }: { shape: Shape; templates: PromptTemplates; question: string; sampling: BenchSampling },
): Promise<{ step: StepFigure; messages: readonly ChatMessage[]; result: GenerateResult }> {
  const tokenizer = engine.tokenizer;
  const chunks = chunkAll(book, tokenizer, shape.chunk).slice(0, 2);
  // The memory: text from further into the book, so that it shares nothing with the section.
  const later = book.slice(Math.floor(book.length / 2));
  const memorySpan = chunkAll(later.slice(0, shape.memory * 16), tokenizer, shape.memory)[0]!;
  const memory = later.slice(memorySpan.start, memorySpan.end);
  let engineMs = 0;
  let result: GenerateResult | undefined;
  let sent: readonly ChatMessage[] = [];
  const timed = {
    generate: async (messages: readonly ChatMessage[], options: GenerateOptions) => {
      sent = messages;
      const t0 = performance.now();
      result = await engine.generate(messages, options);
      engineMs = performance.now() - t0;
      return result;
    },
  };
  const loop = memoryLoop({
    text: book,
    chunks,
    question,
    generator: timed,
    templates,
    memoryTokens: shape.write,
    sampling,
    resume: { nextChunk: chunks.length - 1, memory },
  });
  const first = await loop.next();
  await loop.return();
  if (first.done || first.value.kind !== 'revision' || !result) throw new Error('The step ended without a memory.');
  const { usage, finishReason } = result;
  const step: StepFigure = {
    chunkTokens: chunks.at(-1)!.tokens,
    memoryTokens: memorySpan.tokens,
    promptTokens: usage.promptTokens,
    written: usage.completionTokens,
    finishReason,
    seconds: round(first.value.ms / 1000, 3)!,
    engineSeconds: round(engineMs / 1000, 3)!,
    outsideMs: round(first.value.ms - engineMs, 1)!,
  };
  if (usage.prefillTokensPerSecond !== undefined) step.prefillTokensPerSecond = round(usage.prefillTokensPerSecond);
  if (usage.decodeTokensPerSecond !== undefined) step.decodeTokensPerSecond = round(usage.decodeTokensPerSecond);
  if (usage.timeToFirstTokenSeconds !== undefined) step.timeToFirstTokenSeconds = round(usage.timeToFirstTokenSeconds, 3);
  return { step, messages: sent, result };
}

/** The record as a table, for the terminal. */
export function describeRecord(r: BenchRecord): string {
  const mib = (n: number) => `${(n / MiB).toFixed(0)} MiB`;
  const rate = (n: number | undefined) => (n === undefined ? '—' : `${n.toFixed(2)} tokens/s`);
  const lines = [
    `GPU benchmark (${r.size} size) on ${[r.adapter.vendor, r.adapter.architecture, r.adapter.description].filter(Boolean).join(' ')}${r.adapter.fallback ? ' — a software adapter' : ''}`,
    `  ${r.library.file} (${r.library.modelType}, ${r.library.quantization}, ${mib(r.library.weightBytes)} of made-up weights); WebLLM ${r.webllm}; node ${r.node}`,
    `  load              ${r.load.seconds.toFixed(1)} s (${r.load.window}-token window)`,
    ...r.prompts.map(
      (p) =>
        `  prompt ${String(p.promptTokens).padStart(5)} tokens   prefill ${rate(p.prefillTokensPerSecond)}, decode ${rate(p.decodeTokensPerSecond)} (${p.written} written)`,
    ),
    `  one step          ${r.step.chunkTokens}-token chunk + ${r.step.memoryTokens}-token memory = ${r.step.promptTokens} tokens read, ${r.step.written} written (${r.step.finishReason})`,
    `                    prefill ${rate(r.step.prefillTokensPerSecond)}, decode ${rate(r.step.decodeTokensPerSecond)}, first token after ${r.step.timeToFirstTokenSeconds ?? '—'} s`,
    `                    ${r.step.seconds.toFixed(2)} s in all, ${r.step.engineSeconds.toFixed(2)} s of it in WebLLM; ${r.step.outsideMs} ms outside it (${((r.step.outsideMs / 1000 / r.step.seconds) * 100).toFixed(3)} %)`,
    ...r.prompts.flatMap((p) => (p.times ? describeTimes(`prompt ${p.promptTokens}`, p.times) : [])),
    ...(r.step.times ? describeTimes('one step', r.step.times) : []),
    `  GPU memory        ${mib(r.memory.afterLoadBytes)} after load, ${mib(r.memory.peakBytes)} at most (buffers WebLLM allocated)`,
    r.bandwidth
      ? `  bandwidth limit   ${r.bandwidth.gbPerSecond} GB/s (${r.bandwidth.source}): decode at most ${r.bandwidth.decodeLimitTokensPerSecond} tokens/s here; measured ${(r.bandwidth.shareOfLimit * 100).toFixed(1)} % of it`
      : `  bandwidth limit   not known for this device (give --bandwidth-gbps N to compare)`,
    ...(r.speculation ? describeSpeculation(r.speculation) : []),
    ...(r.speculation && r.suite ? describeSuite(r.speculation) : []),
    ...(r.batch ? describeBatch(r.batch) : []),
    ...(r.batches ?? []).flatMap(describeBatch),
    ...(r.dawn.enabled.length + r.dawn.disabled.length
      ? [`  Dawn toggles      ${r.dawn.flags.join(' ')}: features gained ${r.dawn.gained?.join(', ') || 'none'}, lost ${r.dawn.lost?.join(', ') || 'none'}`]
      : []),
    ...(r.cpuProfile ? [`  CPU profile       ${r.cpuProfile}`] : []),
  ];
  return lines.join('\n');
}
