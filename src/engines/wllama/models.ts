import type { TokenSpeed } from '../../core/estimate';
import type { EngineConfig, EngineInfo } from '../engine';

/**
 * What the llama.cpp (WebAssembly) engine needs to know before its runtime is
 * loaded: its entry in the Engine combobox, the models it suggests, how its
 * configuration reads, and the key a picked model file is kept under
 * (picked-models.ts keeps it). Nothing here imports the runtime, so the page can use it freely.
 */

export const WLLAMA_ENGINE_ID = 'wllama';

export const WLLAMA_INFO: EngineInfo = {
  id: WLLAMA_ENGINE_ID,
  label: 'llama.cpp (CPU, WebAssembly)',
  description:
    'Runs a GGUF model on the processor with llama.cpp compiled to WebAssembly: no graphics card needed. ' +
    'Slower than WebGPU; a small model is best. The model file stays in this browser.',
  needsModel: true,
  // Qwen's vocabulary: exact for the suggested Qwen GGUFs; for others the engine plans with a margin.
  standaloneTokenizer: true,
};

export interface SuggestedModel {
  id: string;
  label: string;
  /** The file, or the first of its parts (`-00001-of-0000N.gguf`); the other parts are found from its name. */
  url: string;
  /** Download size, all parts together. */
  bytes: number;
  parts: number;
}

const QWEN = 'https://huggingface.co/Qwen';

/**
 * Qwen2.5 Instruct at Q4_K_M from Qwen's own GGUF repositories, whose vocabulary
 * the app's tokenizer matches exactly. Sizes are the published file sizes,
 * rounded. The 7B comes in two parts; a single file over 2 GB needs a browser
 * with WebAssembly memory64 (it cannot load in the fallback build).
 */
export const SUGGESTED_MODELS: readonly SuggestedModel[] = [
  {
    id: 'qwen2.5-0.5b',
    label: 'Qwen2.5-0.5B-Instruct Q4_K_M',
    url: `${QWEN}/Qwen2.5-0.5B-Instruct-GGUF/resolve/main/qwen2.5-0.5b-instruct-q4_k_m.gguf`,
    bytes: 491_000_000,
    parts: 1,
  },
  {
    id: 'qwen2.5-1.5b',
    label: 'Qwen2.5-1.5B-Instruct Q4_K_M',
    url: `${QWEN}/Qwen2.5-1.5B-Instruct-GGUF/resolve/main/qwen2.5-1.5b-instruct-q4_k_m.gguf`,
    bytes: 1_120_000_000,
    parts: 1,
  },
  {
    id: 'qwen2.5-3b',
    label: 'Qwen2.5-3B-Instruct Q4_K_M',
    url: `${QWEN}/Qwen2.5-3B-Instruct-GGUF/resolve/main/qwen2.5-3b-instruct-q4_k_m.gguf`,
    bytes: 2_100_000_000,
    parts: 1,
  },
  {
    id: 'qwen2.5-7b',
    label: 'Qwen2.5-7B-Instruct Q4_K_M',
    url: `${QWEN}/Qwen2.5-7B-Instruct-GGUF/resolve/main/qwen2.5-7b-instruct-q4_k_m-00001-of-00002.gguf`,
    bytes: 4_680_000_000,
    parts: 2,
  },
];

/** The largest single file the fallback (32-bit) build can read. */
export const MAX_FILE_BYTES_WITHOUT_MEMORY64 = 2 ** 31 - 1;

/** Context allocated when the configuration names none: one paper-sized step (5000 + 3 × 1024) fits. */
export const DEFAULT_CONTEXT_TOKENS = 8192;

/** Where a model comes from: a URL (downloaded once, then read from the cache) or files picked on this device. */
export type ModelSource = { kind: 'url'; url: string } | { kind: 'local'; key: string; name: string };

export interface WllamaSettings {
  source: ModelSource;
  /** Threads asked for; the engine uses 1 where the page is not cross-origin isolated. */
  threads?: number;
  /** The largest context to allocate (the model's trained context caps it too). */
  contextTokens: number;
}

/**
 * Config keys: `modelUrl`, or `localModel` (+ `localModelName`) for picked
 * files, which wins when both are set; `threads`; `contextTokens`.
 */
export function parseWllamaConfig(config: EngineConfig = {}): WllamaSettings {
  const local = typeof config.localModel === 'string' ? config.localModel.trim() : '';
  const url = typeof config.modelUrl === 'string' ? config.modelUrl.trim() : '';
  let source: ModelSource;
  if (local) {
    source = { kind: 'local', key: local, name: typeof config.localModelName === 'string' ? config.localModelName : local };
  } else if (url) {
    if (!/^https?:\/\//i.test(url)) throw new Error(`The model URL must start with http:// or https:// (got "${url}").`);
    if (!/\.gguf(\?.*)?$/i.test(url)) throw new Error('The model URL must name a .gguf file (for a split model, its first part).');
    source = { kind: 'url', url };
  } else {
    throw new Error('Choose a model for llama.cpp: pick a suggested model, enter a model URL, or choose a GGUF file.');
  }
  const settings: WllamaSettings = { source, contextTokens: DEFAULT_CONTEXT_TOKENS };
  const threads = Number(config.threads);
  if (config.threads !== undefined && config.threads !== '' && Number.isFinite(threads)) settings.threads = Math.max(1, Math.floor(threads));
  const context = Number(config.contextTokens);
  if (config.contextTokens !== undefined && config.contextTokens !== '' && Number.isFinite(context)) {
    if (context < 512) throw new Error(`The context must be at least 512 tokens (got ${context}).`);
    settings.contextTokens = Math.floor(context);
  }
  return settings;
}

/** Threads used when none are asked for: half the logical cores (about the physical ones), at most 8. */
export function defaultThreads(hardwareConcurrency: number | undefined): number {
  return Math.max(1, Math.min(8, Math.floor((hardwareConcurrency || 1) / 2)));
}

/** Threads the engine will use: more than one only in a cross-origin isolated page. */
export function effectiveThreads(requested: number | undefined, hardwareConcurrency: number | undefined, isolated: boolean): number {
  if (!isolated) return 1;
  return Math.max(1, Math.min(requested ?? defaultThreads(hardwareConcurrency), hardwareConcurrency || 1));
}

// ---------------------------------------------------------------- speed

/** Where a CPU engine's speed is measured and kept: this device's processor with a thread count (other counts measure again). */
export function cpuDevice(threads: number): string {
  return `cpu, ${threads} thread${threads === 1 ? '' : 's'}`;
}

/** The thread count of a device `cpuDevice` named; undefined for any other (a GPU). */
export function cpuThreads(device: string): number | undefined {
  const m = /^cpu, (\d+) threads?$/.exec(device);
  return m ? Number(m[1]) : undefined;
}

/**
 * A rough guess before anything is measured. CPU decoding is bound by memory
 * bandwidth: every written token reads all weights once. The constants are a
 * typical laptop core running WebAssembly SIMD (about 8 tokens/s per thread per
 * GB of weights, scaling with threads up to 4) and reading a prompt about 8×
 * faster than writing. A measurement replaces it.
 */
export function guessSpeed(modelBytes: number, threads: number): TokenSpeed {
  const gb = Math.max(modelBytes / 1e9, 0.05);
  const decode = (8 * Math.min(Math.max(threads, 1), 4)) / gb;
  return { prefillTokensPerSecond: decode * 8, decodeTokensPerSecond: decode };
}

// ---------------------------------------------------------------- picked files

/** The folder of this origin's private file system that holds model files a person picked. */
export const LOCAL_MODEL_DIR = 'memagent-local-models';

interface FileLike {
  name: string;
  size: number;
  lastModified: number;
}

/**
 * A stable key for picked files: the same files picked again (after a reload,
 * say) map to the same stored copy, so a paused run resumes with its model.
 */
export function localModelKey(files: readonly FileLike[]): string {
  const sorted = [...files].sort((a, b) => a.name.localeCompare(b.name));
  const first = sorted[0];
  if (!first) throw new Error('Choose at least one GGUF file.');
  const bytes = sorted.reduce((n, f) => n + f.size, 0);
  const newest = Math.max(...sorted.map((f) => f.lastModified));
  const stem = first.name
    .replace(/\.gguf$/i, '')
    .replace(/[^A-Za-z0-9._-]+/g, '_')
    .slice(0, 80);
  return `${stem}-${bytes}-${newest}`;
}

/** Whether a GGUF's vocabulary is Qwen2's, which the app's tokenizer counts exactly. */
export function isQwenVocabulary(info: { n_vocab: number; metadata: Record<string, string> }): boolean {
  const arch = info.metadata['general.architecture'] ?? '';
  const pre = info.metadata['tokenizer.ggml.pre'] ?? '';
  return (pre === 'qwen2' || arch === 'qwen2') && info.n_vocab >= 151_643 && info.n_vocab <= 152_064;
}
