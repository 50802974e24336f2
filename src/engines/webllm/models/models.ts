import type { ChatFamily } from '../../../core/infmem/chat-text';
import type { EngineConfig, EngineInfo } from '../../engine';
import type { GpuCapability } from '../check/webgpu';
import { type ModelRecordLike, SHIPPED_WEBLLM, type WebLLMAppConfig, type WebLLMVersion } from '../versions';

export type { ChatFamily, ModelRecordLike };

/** One model the app can download and run. */
export interface ModelEntry {
  id: string;
  label: string;
  /** Base URL of the model's files, ending in `resolve/<branch>/` as WebLLM makes it. */
  modelUrl: string;
  /** The compiled model library (.wasm). */
  libUrl: string;
  vramMB?: number;
  /** Rough download size before tensor-cache.json is read; exact afterwards. */
  approxDownloadMB?: number;
  /** Longest context the model takes; for prebuilt models read from its mlc-chat-config.json. */
  contextLimit?: number;
  /** Needs the `shader-f16` adapter feature; unknown for a custom model until its config is read. */
  needsF16?: boolean;
  /** The chat text the model was trained on; for a custom model read from its library (see chatFamilyOf). */
  family?: ChatFamily;
  custom: boolean;
}

/** What a person enters for a model converted elsewhere (RL-MemAgent-7B with the Qwen2-7B library, InfMem-4B with the Qwen3-4B one). */
export interface CustomModelSpec {
  id: string;
  label: string;
  modelUrl: string;
  libUrl: string;
  contextLimit: number;
}

/** Progress of a download or load, for the "Model download" bar. */
export interface ModelProgress {
  modelId: string;
  phase: 'download' | 'load';
  state: 'working' | 'done' | 'failed';
  /** 0..1 */
  fraction: number;
  text: string;
}

export const WEBLLM_INFO: EngineInfo = {
  id: 'webllm',
  label: 'WebLLM (WebGPU)',
  description:
    'Qwen2.5 (0.5B–7B), Qwen3 (0.6B–8B) or a converted RL-MemAgent-7B or InfMem-4B on your GPU, in this browser: nothing leaves the device. The model is downloaded once (see Models).',
  needsModel: true,
  // The model's own tokenizer.json, fetched with the model.
  standaloneTokenizer: false,
};

export const DEFAULT_MODEL_ID = 'Qwen2.5-7B-Instruct-q4f16_1-MLC';
/** Qwen2.5's own config allows 32K; WebLLM's prebuilt list overrides it to 4096, which we never use. */
export const QWEN_CONTEXT_LIMIT = 32_768;

/** Qwen3's own config allows 40,960 (`max_position_embeddings`); WebLLM's prebuilt list overrides it to 4096. A load reads the limit from mlc-chat-config.json. */
export const QWEN3_CONTEXT_LIMIT = 40_960;

const QWEN25 = /^Qwen2\.5-(0\.5|1\.5|3|7)B-Instruct-(q4f16_1|q4f32_1)-MLC$/;
const QWEN3 = /^Qwen3-(0\.6|1\.7|4|8)B-(q4f16_1|q4f32_1)-MLC$/;

// About 4.5 bits a weight with f16 scales, 5 with f32 ones; replaced by the exact size once tensor-cache.json is read.
const APPROX_MB: Record<string, [f16: number, f32: number]> = {
  '0.5': [280, 320],
  '1.5': [880, 980],
  '3': [1750, 1930],
  '7': [4300, 4780],
  '0.6': [340, 380],
  '1.7': [960, 1060],
  '4': [2250, 2500],
  '8': [4610, 5120],
};

/** The same rule WebLLM applies to `ModelRecord.model`: a bare repository URL reads its main branch. */
export function cleanModelUrl(url: string): string {
  let u = url.trim();
  u += u.endsWith('/') ? '' : '/';
  if (!/.+\/resolve\/.+\//.test(u)) u += 'resolve/main/';
  return new URL(u).href;
}

/** A prebuilt id's family, size and quantisation, where it is one of the models the app lists. */
function parseQwen(id: string): { family: ChatFamily; size: string; quant: string } | undefined {
  const q25 = QWEN25.exec(id);
  if (q25) return { family: 'qwen2.5', size: q25[1]!, quant: q25[2]! };
  const q3 = QWEN3.exec(id);
  return q3 ? { family: 'qwen3', size: q3[1]!, quant: q3[2]! } : undefined;
}

/**
 * Qwen2.5 Instruct 0.5B–7B, then Qwen3 0.6B–8B, in both quantisations,
 * smallest first, from WebLLM's prebuilt list.
 */
export function qwenModels(list: readonly ModelRecordLike[]): ModelEntry[] {
  const out: ModelEntry[] = [];
  for (const r of list) {
    const m = parseQwen(r.model_id);
    if (!m) continue;
    const f16 = m.quant === 'q4f16_1';
    const qwen3 = m.family === 'qwen3';
    const entry: ModelEntry = {
      id: r.model_id,
      label: qwen3 ? `Qwen3 ${m.size}B (${m.quant})` : `Qwen2.5 ${m.size}B Instruct (${m.quant})`,
      modelUrl: cleanModelUrl(r.model),
      libUrl: r.model_lib,
      needsF16: f16,
      contextLimit: qwen3 ? QWEN3_CONTEXT_LIMIT : QWEN_CONTEXT_LIMIT,
      family: m.family,
      custom: false,
    };
    if (r.vram_required_MB !== undefined) entry.vramMB = Math.round(r.vram_required_MB);
    const approx = APPROX_MB[m.size];
    if (approx) entry.approxDownloadMB = f16 ? approx[0] : approx[1];
    out.push(entry);
  }
  return out.sort((a, b) => rank(a.id) - rank(b.id) || a.id.localeCompare(b.id));
}

/** Qwen2.5 before Qwen3, each smallest first. */
function rank(id: string): number {
  const m = parseQwen(id);
  return m ? (m.family === 'qwen3' ? 100 : 0) + Number(m.size) : 999;
}

/**
 * The chat text a model was trained on, which InfMem renders itself: the
 * entry's own family, else (a model converted elsewhere) the one its model
 * library names, else its id or URL — a Qwen3 library means Qwen3's template
 * (InfMem-4B runs on the Qwen3-4B library); anything else is taken for
 * Qwen2.5's (RL-MemAgent-7B on the Qwen2-7B library).
 */
export function chatFamilyOf(entry: Pick<ModelEntry, 'id' | 'libUrl'> & Partial<Pick<ModelEntry, 'family' | 'modelUrl' | 'label'>>): ChatFamily {
  if (entry.family) return entry.family;
  const lib = entry.libUrl.split(/[?#]/)[0]!.split('/').pop() ?? '';
  if (/qwen3/i.test(lib)) return 'qwen3';
  if (/qwen2/i.test(lib)) return 'qwen2.5';
  return /qwen3|infmem/i.test(`${entry.id} ${entry.label ?? ''} ${entry.modelUrl ?? ''}`) ? 'qwen3' : 'qwen2.5';
}

/**
 * Why a MemAgent read cannot use this model, or null where it can. Qwen3
 * models think before they answer unless told not to, and MemAgent's
 * prompts and trained models (RL-MemAgent) are Qwen2.5's: they read with
 * InfMem, whose chat text turns thinking on or off itself.
 */
export function memagentProblem(entry: Parameters<typeof chatFamilyOf>[0] & { label?: string }): string | null {
  if (chatFamilyOf(entry) !== 'qwen3') return null;
  return `${entry.label ?? entry.id} is a Qwen3 model, which reads with InfMem only: MemAgent's prompts and models are Qwen2.5's, and Qwen3 would think at length before each memory. Read with InfMem, or choose a Qwen2.5 model or RL-MemAgent-7B for MemAgent.`;
}

let prebuilt: Promise<ModelEntry[]> | undefined;

/** The prebuilt list of the pinned WebLLM version; loads WebLLM's bundle, so only in the worker. */
export function prebuiltModels(): Promise<ModelEntry[]> {
  if (!prebuilt) {
    prebuilt = import('@mlc-ai/web-llm').then((w) => qwenModels(w.prebuiltAppConfig.model_list));
    prebuilt.catch(() => (prebuilt = undefined)); // a failed load (offline) is tried again next time
  }
  return prebuilt;
}

export function customEntry(spec: CustomModelSpec): ModelEntry {
  return {
    id: spec.id,
    label: spec.label,
    modelUrl: cleanModelUrl(spec.modelUrl),
    libUrl: spec.libUrl.trim(),
    contextLimit: spec.contextLimit,
    custom: true,
  };
}

/** A problem with a custom model's fields, said so the person can fix it; null when fine. */
export function customModelProblem(spec: Partial<CustomModelSpec>): string | null {
  if (!spec.label?.trim()) return 'Give the model a name.';
  for (const [what, url] of [
    ['model URL', spec.modelUrl],
    ['model library URL', spec.libUrl],
  ] as const) {
    try {
      const u = new URL(url ?? '');
      if (u.protocol !== 'https:' && u.protocol !== 'http:') throw new Error();
    } catch {
      return `The ${what} must be a full http(s) address.`;
    }
  }
  if (!/\.wasm(\?|$)/.test(spec.libUrl ?? '')) return 'The model library URL must point at a .wasm file built for WebLLM.';
  const limit = spec.contextLimit ?? NaN;
  if (!Number.isInteger(limit) || limit < 8192 || limit > 1_048_576) {
    return 'The context limit must be a whole number of tokens from 8,192 (one MemAgent step) to 1,048,576.';
  }
  return null;
}

/** The q4f32_1 build of a q4f16_1 model, when the list has one. */
export function f32Variant(id: string, entries: readonly ModelEntry[]): ModelEntry | undefined {
  if (!id.includes('q4f16_1')) return undefined;
  return entries.find((e) => e.id === id.replace('q4f16_1', 'q4f32_1'));
}

export function f16Note(from: string, to: string): string {
  return `This GPU lacks the shader-f16 feature that ${from} needs, so ${to} is used instead: the same model with 32-bit scales, a little larger and slower.`;
}

/** The model to run on this GPU: a q4f16_1 model becomes its q4f32_1 build when the adapter lacks shader-f16. */
export function chooseModel(
  id: string,
  entries: readonly ModelEntry[],
  gpu: Pick<GpuCapability, 'shaderF16'>,
): { entry: ModelEntry | undefined; note: string | null } {
  const entry = entries.find((e) => e.id === id);
  if (!entry || gpu.shaderF16 || !entry.needsF16) return { entry, note: null };
  const f32 = f32Variant(id, entries);
  return f32 ? { entry: f32, note: f16Note(entry.id, f32.id) } : { entry, note: null };
}

/** The engine config a run stores: a custom model carries its URLs, so a resume needs no lookup. */
export function engineConfigFor(entry: ModelEntry): EngineConfig {
  if (!entry.custom) return { model: entry.id };
  return { model: entry.id, label: entry.label, modelUrl: entry.modelUrl, libUrl: entry.libUrl, contextLimit: entry.contextLimit ?? QWEN_CONTEXT_LIMIT };
}

/** The model a stored engine config names; a custom one is rebuilt from its own fields. */
export function entryFromConfig(config: EngineConfig | undefined, entries: readonly ModelEntry[]): ModelEntry {
  const id = typeof config?.model === 'string' && config.model ? config.model : DEFAULT_MODEL_ID;
  if (typeof config?.modelUrl === 'string' && typeof config.libUrl === 'string') {
    return customEntry({
      id,
      label: typeof config.label === 'string' ? config.label : id,
      modelUrl: config.modelUrl,
      libUrl: config.libUrl,
      contextLimit: typeof config.contextLimit === 'number' ? config.contextLimit : QWEN_CONTEXT_LIMIT,
    });
  }
  const entry = entries.find((e) => e.id === id);
  if (!entry) throw new Error(`The model "${id}" is not in this version's list. Choose one in the Model list under the engine.`);
  return entry;
}

/** What a stored engine config says of its model without the list: enough for chatFamilyOf. */
export function configModel(config: EngineConfig): { id: string; label: string; libUrl: string } {
  const id = typeof config.model === 'string' && config.model ? config.model : DEFAULT_MODEL_ID;
  return { id, label: typeof config.label === 'string' ? config.label : id, libUrl: typeof config.libUrl === 'string' ? config.libUrl : '' };
}

/** A one-model WebLLM app config on the Cache Storage backend, whose layout the downloader fills. */
export function appConfigFor(entry: ModelEntry, version: WebLLMVersion = SHIPPED_WEBLLM): WebLLMAppConfig {
  return { model_list: [{ model: entry.modelUrl, model_id: entry.id, model_lib: entry.libUrl }], ...version.cacheConfig };
}

type Listener = (p: ModelProgress) => void;
const listeners = new Set<Listener>();

/** Every download and load reports here, whether a person pressed Download or a run needed the model. */
export function onModelProgress(listener: Listener): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

export function reportModelProgress(p: ModelProgress): void {
  for (const l of listeners) {
    try {
      l(p);
    } catch {
      // a listener that went away (a closed page) must not stop a download
    }
  }
}
