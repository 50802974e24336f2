import type { Penalties, Sampling } from '../../core/speculative';

/** The fields of a WebLLM model record that this app reads. */
export interface ModelRecordLike {
  model: string;
  model_id: string;
  model_lib: string;
  vram_required_MB?: number;
}

/**
 * What differs between the WebLLM versions the engine adapter drives: the
 * app ships one (pinned in package.json), and its real-kernel test runs
 * another, the newest whose model libraries can be had offline. Anything
 * the adapter must do differently per version lives here and nowhere else,
 * so the next upgrade meets its differences in one file.
 */

export interface WebLLMVersion {
  version: string;
  /** The weights index beside the shards, which WebLLM reads from `webllm/model` (same layout in both). */
  weightsIndex: 'tensor-cache.json' | 'ndarray-cache.json';
  /** The app-config fields that keep WebLLM on Cache Storage, whose layout the app's downloader fills. */
  cacheConfig: { cacheBackend: 'cache' } | { useIndexedDBCache: false };
  /**
   * Whether a chat request may set `repetition_penalty`. Where it may not,
   * the model config's value (1.05 for Qwen) applies unless the load
   * overrides it.
   */
  requestRepetitionPenalty: boolean;
  /** Whether `usage.completion_tokens` counts the token the prefill wrote, or only the decode steps after it. */
  completionCountsFirstToken: boolean;
  /** Where its model libraries live in mlc-ai/binary-mlc-llm-libs (a library from another folder fails to load). */
  libraryFolder: string;
  /** The npm name it is installed under: the shipped dependency, or an alias of it. */
  packageName: string;
  /**
   * How its sampler combines the penalties: 0.2.79 applies presence and
   * frequency where both are known (the model config's zeros count) and the
   * repetition penalty only otherwise; 0.2.86 applies all three.
   */
  penalties: 'either' | 'all';
  /**
   * How a written token is taken into the pipeline: 0.2.79's
   * `processNextToken`, or 0.2.86's `commitSampledToken`, which also feeds
   * its sampler state and counts the token in the reply's usage.
   */
  commitToken: 'process' | 'commit-sampled';
  /** The pipeline's method that samples a token from a forward's logits (still on the GPU), for the prefill and each decode step. */
  sampler: 'sampleTokenFromLogits' | 'sampleFromRawLogits';
}

/** What the app ships and bundles. */
export const WEBLLM_0_2_86: WebLLMVersion = {
  version: '0.2.86',
  weightsIndex: 'tensor-cache.json',
  cacheConfig: { cacheBackend: 'cache' },
  requestRepetitionPenalty: true,
  completionCountsFirstToken: true,
  libraryFolder: 'web-llm-models/v0_2_86/base',
  packageName: '@mlc-ai/web-llm',
  penalties: 'all',
  commitToken: 'commit-sampled',
  sampler: 'sampleFromRawLogits',
};

/**
 * The newest version whose model libraries (`v0_2_48`) can be had offline:
 * the real-kernel tests and the GPU benchmark run it, and the command line
 * runs it for those libraries. Never in the app's bundle.
 */
export const WEBLLM_0_2_79: WebLLMVersion = {
  version: '0.2.79',
  weightsIndex: 'ndarray-cache.json',
  cacheConfig: { useIndexedDBCache: false },
  requestRepetitionPenalty: false,
  completionCountsFirstToken: false,
  libraryFolder: 'web-llm-models/v0_2_48',
  packageName: '@mlc-ai/web-llm-0279',
  penalties: 'either',
  commitToken: 'process',
  sampler: 'sampleTokenFromLogits',
};

export const SHIPPED_WEBLLM = WEBLLM_0_2_86;

/** Every version the adapter knows, the shipped one first. */
export const WEBLLM_VERSIONS: readonly WebLLMVersion[] = [WEBLLM_0_2_86, WEBLLM_0_2_79];

/** A version by its number ("0.2.79"); undefined for one the adapter does not know. */
export function webllmVersion(version: string): WebLLMVersion | undefined {
  return WEBLLM_VERSIONS.find((v) => v.version === version);
}

/**
 * The version a model library was built for, where its URL names a library
 * folder (as WebLLM's own library URLs do); undefined otherwise.
 */
export function versionForLibrary(libUrl: string): WebLLMVersion | undefined {
  return WEBLLM_VERSIONS.find((v) => libUrl.includes(`/${v.libraryFolder}/`));
}

/**
 * The text that tells the Emscripten runtimes inside WebLLM's bundle (the
 * WASI shim of its tensor runtime, its tokenizer) that they run in node. In
 * node they would then take node's paths — one replaces the bundle's own
 * exports, another needs a `createRequire` the bundle never imports — so
 * outside a browser the bundle is loaded with this test answered "no": the
 * runtimes then take the plain path a worker would, and need only
 * WebAssembly. The same text in both versions' bundles.
 */
export const EMSCRIPTEN_NODE_CHECK =
  'var ENVIRONMENT_IS_NODE=typeof process=="object"&&typeof process.versions=="object"&&typeof process.versions.node=="string"';
/** How many runtimes in each bundle carry the check: a bundle with another count is not one this adapter was written for. */
export const EMSCRIPTEN_RUNTIMES = 3;

/** Both names of the weights index: a model converted for one version may carry only the other. */
export const WEIGHTS_INDEX_NAMES = [WEBLLM_0_2_86.weightsIndex, WEBLLM_0_2_79.weightsIndex] as const;

/** A one-model app config for one version, on the Cache Storage backend. */
export type WebLLMAppConfig = { model_list: ModelRecordLike[] } & WebLLMVersion['cacheConfig'];

/**
 * The options merged over the model's config at load: the planned window
 * (the prebuilt 4096 never applies) and, where requests cannot carry it, the
 * repetition penalty.
 */
export function loadOptions(version: WebLLMVersion, window: number, repetitionPenalty: number): Record<string, unknown> {
  return version.requestRepetitionPenalty ? { context_window_size: window } : { context_window_size: window, repetition_penalty: repetitionPenalty };
}

/**
 * Tokens a request wrote, from its usage. A prefill always writes the first
 * one (Pause is heard only between decode steps), so where WebLLM counts
 * decode steps only, that token is added back.
 */
export function writtenTokens(version: WebLLMVersion, usage: { prompt_tokens: number; completion_tokens: number }): number {
  return usage.completion_tokens + (!version.completionCountsFirstToken && usage.prompt_tokens > 0 ? 1 : 0);
}

/**
 * The context window the loaded model really has, read back from the engine;
 * undefined where a version keeps it elsewhere. Both versions keep each
 * loaded model's chat pipeline in `loadedModelIdToPipeline`, whose
 * `contextWindowSize` sized the KV cache.
 */
export function loadedContextWindow(engine: unknown, modelId: string): number | undefined {
  const pipelines = (engine as { loadedModelIdToPipeline?: unknown } | null)?.loadedModelIdToPipeline;
  if (!(pipelines instanceof Map)) return undefined;
  const size = (pipelines.get(modelId) as { contextWindowSize?: unknown } | undefined)?.contextWindowSize;
  return typeof size === 'number' && size > 0 ? size : undefined;
}

/** The chat pipeline WebLLM keeps for a loaded model (both versions: `loadedModelIdToPipeline`); undefined where there is none. */
export function loadedPipeline(engine: unknown, modelId: string): unknown {
  const pipelines = (engine as { loadedModelIdToPipeline?: unknown } | null)?.loadedModelIdToPipeline;
  return pipelines instanceof Map ? pipelines.get(modelId) : undefined;
}

/** Sampling settings as a request and the model config give them (WebLLM's field names). */
export interface SamplingFields {
  temperature?: number | null;
  top_p?: number | null;
  repetition_penalty?: number | null;
  presence_penalty?: number | null;
  frequency_penalty?: number | null;
}

/** The penalties a request's sampling applies in `version`, from the request's fields over the model config's. */
export function penaltiesOf(version: WebLLMVersion, config: SamplingFields, request: SamplingFields | undefined): Penalties {
  const has = (v: number | null | undefined): v is number => v !== undefined && v !== null;
  const pick = (key: 'repetition_penalty' | 'presence_penalty' | 'frequency_penalty') => (has(request?.[key]) ? request[key] : config[key]);
  let presence = pick('presence_penalty');
  let frequency = pick('frequency_penalty');
  const repetition = pick('repetition_penalty') ?? 1;
  if (version.penalties === 'all') return { presence: presence ?? 0, frequency: frequency ?? 0, repetition };
  // 0.2.79 fills the missing one of the two with zero, but only when the request carries sampling fields at all.
  if (request !== undefined) {
    if (has(frequency) && !has(presence)) presence = 0;
    if (has(presence) && !has(frequency)) frequency = 0;
  }
  return has(presence) && has(frequency) ? { presence, frequency, repetition: 1 } : { presence: 0, frequency: 0, repetition };
}

/** The request's temperature and top-p over the model config's, as the version's sampler reads them. */
export function samplingOf(config: SamplingFields, request: SamplingFields | undefined): Sampling {
  const has = (v: number | null | undefined): v is number => v !== undefined && v !== null;
  return {
    temperature: has(request?.temperature) ? request.temperature : (config.temperature ?? 1),
    topP: has(request?.top_p) ? request.top_p : (config.top_p ?? 1),
  };
}

/** The pipeline methods a written token goes through, in either version. */
export interface CommittingPipeline {
  processNextToken(token: number, genConfig: unknown): void;
  commitSampledToken?(token: number, genConfig: unknown, source: 'decode'): void;
  logitProcessor?: { processSampledToken(token: number): void };
}

/**
 * Takes one written token into the pipeline as its own decode step would:
 * the logit processor told, the reply and its stop conditions updated, and
 * (0.2.86) the token counted in the usage.
 */
export function commitToken(version: WebLLMVersion, pipeline: CommittingPipeline, token: number, genConfig: unknown): void {
  if (version.commitToken === 'commit-sampled') {
    if (!pipeline.commitSampledToken) throw new Error(`WebLLM ${version.version}'s pipeline has no commitSampledToken.`);
    pipeline.commitSampledToken(token, genConfig, 'decode');
    return;
  }
  pipeline.logitProcessor?.processSampledToken(token);
  pipeline.processNextToken(token, genConfig);
}

/**
 * Why a loaded pipeline cannot verify drafts, or undefined where it can:
 * 0.2.86 also runs models with a recurrent state or through its "artifact"
 * path, which a KV-cache rollback does not cover.
 */
export function verifyBlocker(pipeline: { kvCache?: unknown; rnnState?: unknown; artifact?: unknown }): string | undefined {
  if (pipeline.kvCache === undefined) return 'the model has no KV cache';
  if (pipeline.rnnState !== undefined) return 'the model keeps a recurrent state';
  if (pipeline.artifact !== undefined) return 'the model runs through an artifact';
  return undefined;
}

/**
 * The tensor runtime a model library was linked against, from what its wasm
 * imports: the `v0_2_48` libraries call the runtime's `TVMWasmPackedCFunc`
 * (the runtime inside WebLLM 0.2.79), the `v0_2_80` and later ones
 * `TVMFFIWasmSafeCall` (TVM's FFI, inside 0.2.86). A library handed to the
 * other runtime fails to link, so this is what picks the runtime for a
 * library file whose folder is not known.
 */
const RUNTIME_IMPORTS: readonly [string, WebLLMVersion][] = [
  ['TVMFFIWasmSafeCall', WEBLLM_0_2_86],
  ['TVMWasmPackedCFunc', WEBLLM_0_2_79],
];

/** The version a model library's bytes were built for (see RUNTIME_IMPORTS); undefined for bytes that are no model library. */
export function versionForLibraryBytes(library: Uint8Array<ArrayBuffer>): WebLLMVersion | undefined {
  let imports: string[];
  try {
    imports = WebAssembly.Module.imports(new WebAssembly.Module(library)).map((i) => i.name);
  } catch {
    return undefined;
  }
  return RUNTIME_IMPORTS.find(([name]) => imports.includes(name))?.[1];
}

/** Which library folder each version runs, for messages: "0.2.86 runs web-llm-models/v0_2_86/base, 0.2.79 runs …". */
export function libraryFolders(): string {
  return WEBLLM_VERSIONS.map((v) => `WebLLM ${v.version} runs the libraries of ${v.libraryFolder}/`).join('; ');
}
