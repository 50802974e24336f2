/**
 * The app's WebLLM engine outside a browser: the same engine class, GPU
 * session, downloader, tokenizer and requests as in the app's worker, with
 * what a browser would give supplied here — WebGPU from Dawn (dawn.ts), Cache
 * Storage from a folder (file-caches.ts), WebLLM's bundle loaded for node
 * (webllm-module.ts). The command line's `--engine webllm` and the GPU
 * benchmark both run on it.
 */
import type { EngineConfig } from '../../engine';
import { createWebLLMEngine, type WebLLMEngine } from '../engine';
import { GpuSession } from '../gpu-session';
import type { MlcFactory } from '../driver/mlc';
import { type WebLLMDeps } from '../resolve';
import { type DownloadOptions, downloadModel, ensureConfigAndTokenizer } from '../models/model-download';
import { type ModelEntry, qwenModels } from '../models/models';
import { loadModelTokenizer } from '../models/tokenizer';
import { fetchTokenizerConfig } from '../models/tokenizer-config';
import type { WebLLMVersion } from '../versions';
import type { GpuCapability } from '../check/webgpu';
import { checkNodeGpu, type Dawn, yieldToSoftwareGpu } from './dawn';
import { FileCaches } from './file-caches';
import { importWebLLM, nodeMlcFactory, type WebLLMModule } from './webllm-module';

export interface NodeWebLLMOptions {
  /** The folder that plays Cache Storage: downloaded models live here. */
  cacheDir: string;
  /** The WebLLM whose runtime and file names are used. */
  version: WebLLMVersion;
  /** Loads that WebLLM's module (default: the installed package, made to run in node). */
  load?(version: WebLLMVersion): Promise<WebLLMModule>;
  /** This machine's GPU (default: Dawn's adapter). */
  checkGpu?(): Promise<GpuCapability & { dawn?: Dawn }>;
  /** Makes MLCEngines (default: the loaded WebLLM's). */
  factory?: MlcFactory;
  fetch?: typeof fetch;
}

/**
 * WebLLM reads a few browser globals: `caches` (its Cache Storage backend,
 * here the folder the app's downloader fills) and `location` (a base for
 * relative model URLs, which a node process has not got).
 */
function installGlobals(caches: FileCaches): void {
  const g = globalThis as { caches?: unknown; location?: unknown };
  g.caches = caches.asCacheStorage();
  g.location ??= new URL('file:///');
}

export class NodeWebLLM {
  readonly caches: FileCaches;
  readonly session: GpuSession;
  private gpu: Promise<GpuCapability & { dawn?: Dawn }> | undefined;

  constructor(readonly options: NodeWebLLMOptions) {
    this.caches = new FileCaches(options.cacheDir);
    installGlobals(this.caches);
    const made = options.factory ?? nodeMlcFactory(options.version, options.load ?? importWebLLM);
    // On a software adapter, once a model is loaded (the adapter's threads exist), the polling main thread yields to them.
    const factory: MlcFactory = async (appConfig, onProgress) => {
      const mlc = await made(appConfig, onProgress);
      const reload = mlc.reload.bind(mlc);
      mlc.reload = async (...args) => {
        await reload(...args);
        if ((await this.capability()).fallback) yieldToSoftwareGpu();
      };
      return mlc;
    };
    this.session = new GpuSession(factory, (files, o) => downloadModel(files, { ...o, ...this.downloadOptions() }), options.version);
  }

  get version(): WebLLMVersion {
    return this.options.version;
  }

  /** Where the downloader stores, how it checks the disk's room, and how it fetches. */
  downloadOptions(): Pick<DownloadOptions, 'caches' | 'estimate' | 'fetch' | 'online' | 'webllm'> {
    return {
      caches: this.caches.asCacheStorage(),
      estimate: () => this.caches.estimate(),
      ...(this.options.fetch && { fetch: this.options.fetch }),
      // A node process has no online flag: a network failure says what happened instead.
      online: () => true,
      webllm: this.options.version,
    };
  }

  capability(): Promise<GpuCapability & { dawn?: Dawn }> {
    this.gpu ??= (this.options.checkGpu ?? (() => checkNodeGpu()))();
    return this.gpu;
  }

  /** Qwen2.5 0.5B–7B and Qwen3 0.6B–8B from this WebLLM's own prebuilt list (its model libraries are built for it). */
  async prebuilt(): Promise<ModelEntry[]> {
    return qwenModels((await (this.options.load ?? importWebLLM)(this.options.version)).prebuiltAppConfig.model_list);
  }

  /** What createWebLLMEngine needs, from this machine; `models` are the entries a config may name. */
  deps(models: () => Promise<ModelEntry[]>): WebLLMDeps {
    const o = this.downloadOptions();
    return {
      checkGpu: () => this.capability(),
      models,
      metadata: (model) => ensureConfigAndTokenizer(model, o),
      loadTokenizer: loadModelTokenizer,
      session: this.session,
      tokenizerConfig: (model) => fetchTokenizerConfig(model.modelUrl, o.caches, this.options.fetch),
    };
  }

  /** The app's WebLLM engine for `config`, its config and tokenizer read (downloaded first if need be). */
  engine(config: EngineConfig, models: () => Promise<ModelEntry[]>): Promise<WebLLMEngine> {
    return createWebLLMEngine(config, this.deps(models));
  }
}
