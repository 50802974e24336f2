import { deleteModelFiles, modelCacheState, type CacheState } from './models/model-download';
import { checkWebGPU, type GpuCapability } from './check/webgpu';
import { createWebLLMEngine } from './engine';
import { type GpuSession, session } from './gpu-session';
import {
  chooseModel,
  customEntry,
  chatFamilyOf,
  type ChatFamily,
  customModelProblem,
  type CustomModelSpec,
  DEFAULT_MODEL_ID,
  engineConfigFor,
  entryFromConfig,
  f16Note,
  type ModelEntry,
  type ModelProgress,
  onModelProgress,
  prebuiltModels,
} from './models/models';
import type { EngineConfig } from '../engine';
import type { SpeedShelf } from '../speed-shelf';
import { modelKey, type SpeedRecord } from '../../core/estimate';

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
  /** The chat text it was trained on: a Qwen3 model reads with InfMem only (see memagentProblem). */
  family: ChatFamily;
  /** What a run on this model stores as its engine config. */
  engineConfig: EngineConfig;
  /** Its reading and writing speed measured on this GPU when it was loaded, if it was. */
  speed?: Pick<SpeedRecord, 'prefillTokensPerSecond' | 'decodeTokensPerSecond' | 'measuredAt'>;
}

export interface ModelList {
  gpu: GpuCapability;
  models: ModelView[];
  /** The model offered first: Qwen2.5-7B, as q4f32_1 where the GPU lacks shader-f16. */
  defaultId: string;
  /** Why the default is not the q4f16_1 build, if it is not. */
  note: string | null;
}

/** What the model manager keeps between visits: the speeds measured here and the models added by URL (see SpeedShelf). */
export interface ModelShelf extends SpeedShelf {
  customModels(): Promise<CustomModelSpec[]>;
  addCustomModel(spec: CustomModelSpec): Promise<void>;
  /** Forgets a custom model and every speed measured with it. */
  forgetCustomModel(id: string, modelId: string): Promise<void>;
}

/**
 * The model manager behind the Models region: lists models with their cache
 * state, downloads, loads and deletes them, and keeps custom models and
 * measured speeds on the shelf it is given.
 */
export class ModelService {
  private gpu: Promise<GpuCapability> | undefined;

  constructor(
    private readonly shelf: ModelShelf,
    private readonly gpuSession: GpuSession = session,
    private readonly createEngine: typeof createWebLLMEngine = createWebLLMEngine,
    private readonly checkGpu: () => Promise<GpuCapability> = checkWebGPU,
  ) {}

  capability(): Promise<GpuCapability> {
    this.gpu ??= this.checkGpu();
    return this.gpu;
  }

  private async entries(): Promise<ModelEntry[]> {
    const custom = (await this.shelf.customModels()).map(customEntry);
    return [...(await prebuiltModels()), ...custom];
  }

  private async entry(id: string): Promise<ModelEntry> {
    const found = (await this.entries()).find((e) => e.id === id);
    if (!found) throw new Error(`No model "${id}" in the Models list.`);
    return found;
  }

  async list(): Promise<ModelList> {
    const [gpu, entries, speeds] = await Promise.all([this.capability(), this.entries(), this.shelf.speeds()]);
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
          family: chatFamilyOf(e),
        };
        const bytes = cache.bytesTotal ?? (e.approxDownloadMB !== undefined ? e.approxDownloadMB * 1024 * 1024 : undefined);
        if (bytes !== undefined) view.downloadBytes = bytes;
        if (e.vramMB !== undefined) view.vramMB = e.vramMB;
        if (e.contextLimit !== undefined) view.contextLimit = e.contextLimit;
        const speed = speeds.find((c) => c.modelId === modelKey(view.engineConfig) && c.adapter === gpu.adapter);
        if (speed)
          view.speed = {
            prefillTokensPerSecond: speed.prefillTokensPerSecond,
            decodeTokensPerSecond: speed.decodeTokensPerSecond,
            measuredAt: speed.measuredAt,
          };
        return view;
      }),
    );
    const chosen = chooseModel(DEFAULT_MODEL_ID, entries, gpu);
    return {
      gpu,
      models,
      defaultId: chosen.entry?.id ?? DEFAULT_MODEL_ID,
      note: chosen.note ?? (gpu.shaderF16 ? null : f16Note('q4f16_1 models', 'their q4f32_1 builds')),
    };
  }

  /**
   * What the model `config` names (the build this GPU runs, as a run would
   * choose it) still lacks before its engine can be made from this device's
   * files alone: a GPU that runs it, or its download; null when it lacks
   * neither. Nothing is fetched to tell.
   */
  async lacks(config?: EngineConfig): Promise<'gpu' | 'download' | null> {
    const gpu = await this.capability();
    if (gpu.status !== 'ok') return 'gpu';
    const entries = await prebuiltModels();
    const asked = entryFromConfig(config, entries);
    const e = chooseModel(asked.id, entries, gpu).entry ?? asked;
    if (e.needsF16 && !gpu.shaderF16) return 'gpu';
    return (await modelCacheState(e)).complete ? null : 'download';
  }

  /** Refuses, before a byte is fetched, where WebGPU cannot run the model anyway. */
  private async runnable(e: ModelEntry): Promise<void> {
    const gpu = await this.capability();
    const err = (name: string, message: string) => Object.assign(new Error(message), { name });
    if (gpu.status !== 'ok') throw err('WebGPUUnavailableError', gpu.message ?? 'WebGPU is not available.');
    if (e.needsF16 && !gpu.shaderF16) throw err('ShaderF16SupportError', `${e.label} needs shader-f16, which this GPU lacks: choose its q4f32_1 build.`);
  }

  /** Downloads what is missing; ends quietly when stopDownload stops it (its received bytes are kept). */
  async download(id: string): Promise<void> {
    const e = await this.entry(id);
    await this.runnable(e);
    await this.gpuSession.download(e).catch((err: unknown) => {
      if ((err as Error | null)?.name !== 'AbortError') throw err;
    });
  }

  /** Stops the model's download in progress, whoever started it; Download resumes it. */
  async stopDownload(id: string): Promise<boolean> {
    return this.gpuSession.stopDownload(id);
  }

  /**
   * Downloads what is missing, then puts the model on the GPU with an 8K
   * window, as a first run would, and measures its speed there once per model
   * and GPU. Returns the speed on this GPU, or undefined where it could not be
   * measured: that never fails the load.
   */
  async load(id: string): Promise<SpeedRecord | undefined> {
    const e = await this.entry(id);
    await this.runnable(e);
    const engine = await this.createEngine(engineConfigFor(e));
    await engine.prepare(0);
    return this.calibrate(e, engine);
  }

  private async calibrate(e: ModelEntry, engine: Awaited<ReturnType<typeof createWebLLMEngine>>): Promise<SpeedRecord | undefined> {
    try {
      const gpu = await this.capability();
      const model = modelKey(engineConfigFor(e));
      const known = await this.shelf.speed(model, gpu.adapter);
      if (known) return known;
      const c = await engine.calibrate();
      const record: SpeedRecord = {
        modelId: model,
        adapter: gpu.adapter,
        prefillTokensPerSecond: c.prefillTokensPerSecond,
        decodeTokensPerSecond: c.decodeTokensPerSecond,
        promptTokens: c.promptTokens,
        completionTokens: c.completionTokens,
        source: c.source,
        measuredAt: Date.now(),
      };
      await this.shelf.keepSpeed(record);
      return record;
    } catch {
      // The model is loaded all the same; the Models list says its speed is not measured.
      return undefined;
    }
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
    await this.shelf.addCustomModel({
      id,
      label: spec.label.trim(),
      modelUrl: spec.modelUrl.trim(),
      libUrl: spec.libUrl.trim(),
      contextLimit: spec.contextLimit,
    });
    return id;
  }

  /** Forgets a custom model, its measured speeds and its files. */
  async removeCustom(id: string): Promise<void> {
    const model = modelKey(engineConfigFor(await this.entry(id)));
    await this.remove(id);
    await this.shelf.forgetCustomModel(id, model);
  }

  watch(listener: (p: ModelProgress) => void): () => void {
    return onModelProgress(listener);
  }
}
