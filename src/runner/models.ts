import { deleteModelFiles, modelCacheState, type CacheState } from '../engines/model-download';
import { checkWebGPU, type GpuCapability } from '../engines/webgpu';
import { createWebLLMEngine, type GpuSession, session } from '../engines/webllm';
import {
  chooseModel,
  customEntry,
  customModelProblem,
  type CustomModelSpec,
  DEFAULT_MODEL_ID,
  engineConfigFor,
  f16Note,
  type ModelEntry,
  type ModelProgress,
  onModelProgress,
  prebuiltModels,
} from '../engines/webllm-models';
import type { EngineConfig } from '../engines/engine';
import type { Store } from '../storage/db';

/** One row of the Models list, as the page shows it. */
export interface ModelView {
  id: string;
  label: string;
  custom: boolean;
  vramMB?: number;
  /** Exact once tensor-cache.json is cached, else approximate. */
  downloadBytes?: number;
  exactSize: boolean;
  cache: CacheState;
  /** This GPU cannot run it (a q4f16_1 model without shader-f16). */
  unsupported: string | null;
  loaded: boolean;
  modelUrl: string;
  libUrl: string;
  contextLimit?: number;
  /** What a run on this model stores as its engine config. */
  engineConfig: EngineConfig;
}

export interface ModelList {
  gpu: GpuCapability;
  models: ModelView[];
  /** The model offered first: Qwen2.5-7B, as q4f32_1 where the GPU lacks shader-f16. */
  defaultId: string;
  /** Why the default is not the q4f16_1 build, if it is not. */
  note: string | null;
}

/**
 * The model manager behind the Models region: lists models with their cache
 * state, downloads, loads and deletes them, and keeps custom models in storage.
 */
export class ModelService {
  private gpu: Promise<GpuCapability> | undefined;

  constructor(
    private readonly store: Promise<Store>,
    private readonly gpuSession: GpuSession = session,
    private readonly createEngine: typeof createWebLLMEngine = createWebLLMEngine,
  ) {}

  capability(): Promise<GpuCapability> {
    this.gpu ??= checkWebGPU();
    return this.gpu;
  }

  private async entries(): Promise<ModelEntry[]> {
    const custom = (await (await this.store).listCustomModels()).map(customEntry);
    return [...(await prebuiltModels()), ...custom];
  }

  private async entry(id: string): Promise<ModelEntry> {
    const found = (await this.entries()).find((e) => e.id === id);
    if (!found) throw new Error(`No model "${id}" in the Models list.`);
    return found;
  }

  async list(): Promise<ModelList> {
    const [gpu, entries] = await Promise.all([this.capability(), this.entries()]);
    const loaded = this.gpuSession.current?.id;
    const models = await Promise.all(
      entries.map(async (e): Promise<ModelView> => {
        const cache = await modelCacheState(e);
        const view: ModelView = {
          id: e.id,
          label: e.label,
          custom: e.custom,
          exactSize: cache.bytesTotal !== undefined,
          cache,
          unsupported: e.needsF16 && !gpu.shaderF16 ? 'needs shader-f16, which this GPU lacks' : null,
          loaded: loaded === e.id,
          modelUrl: e.modelUrl,
          libUrl: e.libUrl,
          engineConfig: engineConfigFor(e),
        };
        const bytes = cache.bytesTotal ?? (e.approxDownloadMB !== undefined ? e.approxDownloadMB * 1024 * 1024 : undefined);
        if (bytes !== undefined) view.downloadBytes = bytes;
        if (e.vramMB !== undefined) view.vramMB = e.vramMB;
        if (e.contextLimit !== undefined) view.contextLimit = e.contextLimit;
        return view;
      }),
    );
    const chosen = chooseModel(DEFAULT_MODEL_ID, entries, gpu);
    return { gpu, models, defaultId: chosen.entry?.id ?? DEFAULT_MODEL_ID, note: chosen.note ?? (gpu.shaderF16 ? null : f16Note('q4f16_1 models', 'their q4f32_1 builds')) };
  }

  /** Refuses, before a byte is fetched, where WebGPU cannot run the model anyway. */
  private async runnable(e: ModelEntry): Promise<void> {
    const gpu = await this.capability();
    const err = (name: string, message: string) => Object.assign(new Error(message), { name });
    if (gpu.status !== 'ok') throw err('WebGPUUnavailableError', gpu.message ?? 'WebGPU is not available.');
    if (e.needsF16 && !gpu.shaderF16) throw err('ShaderF16SupportError', `${e.label} needs shader-f16, which this GPU lacks: choose its q4f32_1 build.`);
  }

  async download(id: string): Promise<void> {
    const e = await this.entry(id);
    await this.runnable(e);
    await this.gpuSession.download(e);
  }

  /** Downloads what is missing, then puts the model on the GPU with an 8K window, as a first run would. */
  async load(id: string): Promise<void> {
    const e = await this.entry(id);
    await this.runnable(e);
    const engine = await this.createEngine(engineConfigFor(e));
    await engine.prepare(0);
  }

  async remove(id: string): Promise<void> {
    const e = await this.entry(id);
    await this.gpuSession.unloadIf(e.id);
    const others = (await this.entries()).filter((o) => o.id !== e.id && o.libUrl === e.libUrl);
    const states = await Promise.all(others.map((o) => modelCacheState(o)));
    // A model library is shared (Qwen2.5-7B and RL-MemAgent-7B use Qwen2-7B's): keep it while another downloaded model needs it.
    await deleteModelFiles(e, { keepLib: states.some((s) => s.partial) });
  }

  async saveCustom(spec: Omit<CustomModelSpec, 'id'>): Promise<string> {
    const problem = customModelProblem(spec);
    if (problem) throw Object.assign(new Error(problem), { name: 'CustomModelError' });
    const taken = new Set((await this.entries()).map((e) => e.id));
    const base = `custom:${spec.label.trim()}`;
    let id = base;
    for (let n = 2; taken.has(id); n++) id = `${base} (${n})`;
    await (await this.store).putCustomModel({
      id,
      label: spec.label.trim(),
      modelUrl: spec.modelUrl.trim(),
      libUrl: spec.libUrl.trim(),
      contextLimit: spec.contextLimit,
      addedAt: Date.now(),
    });
    return id;
  }

  /** Forgets a custom model and deletes its files. */
  async removeCustom(id: string): Promise<void> {
    await this.remove(id);
    await (await this.store).deleteCustomModel(id);
  }

  watch(listener: (p: ModelProgress) => void): () => void {
    return onModelProgress(listener);
  }
}
