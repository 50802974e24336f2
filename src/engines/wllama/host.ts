import { Turns } from '../../core/turns';
import { ModelLoadError } from '../errors';
import { ModelDownloadError } from '../webllm/models/model-fetch';
import type { ModelSource } from './models';
import type { LoadParams, WllamaDeps, WllamaRuntime } from './runtime';

/** The model in memory and the engine it was loaded for. */
interface Loaded {
  engine: object;
  runtime: WllamaRuntime;
  nCtx: number;
}

export interface LoadProgress {
  stage: 'download' | 'load';
  loaded: number;
  total: number;
}

/**
 * The one model in memory and the queue every request waits in. A CPU has one
 * model's worth of memory and cores to give, so requests from all runs and
 * engines take turns, and loading another model unloads the last one.
 */
export class WllamaHost {
  private loaded: Loaded | null = null;
  private readonly turns = new Turns();
  readonly listeners = new Set<(p: LoadProgress) => void>();

  /** Runs `work` once every request asked for before it has ended. */
  async exclusive<T>(work: () => Promise<T>): Promise<T> {
    const release = await this.turns.take();
    try {
      return await work();
    } finally {
      release();
    }
  }

  current(engine: object): Loaded | null {
    return this.loaded?.engine === engine ? this.loaded : null;
  }

  async unload(): Promise<void> {
    const was = this.loaded;
    this.loaded = null;
    // Best effort: a runtime that cannot exit cleanly is dropped all the same.
    await was?.runtime.exit().catch(() => undefined);
  }

  /** Call only inside `exclusive`. */
  async load(engine: object, source: ModelSource, params: LoadParams, deps: WllamaDeps): Promise<Loaded> {
    await this.unload();
    const runtime = await deps.newRuntime();
    const report = (p: LoadProgress) => this.listeners.forEach((l) => l(p));
    try {
      if (source.kind === 'url') {
        await runtime.loadModelFromUrl(source.url, {
          ...params,
          progressCallback: ({ loaded, total }) => report({ stage: 'download', loaded, total }),
        });
      } else {
        await runtime.loadModel(await deps.openLocal(source.key), params);
      }
    } catch (e) {
      // Best effort: the load's own failure is what is thrown.
      await runtime.exit().catch(() => undefined);
      throw explainLoadError(e, source);
    }
    report({ stage: 'load', loaded: 1, total: 1 });
    this.loaded = { engine, runtime, nCtx: runtime.getLoadedContextInfo().n_ctx };
    return this.loaded;
  }
}

function explainLoadError(e: unknown, source: ModelSource): Error {
  const detail = e instanceof Error ? e.message : String(e);
  if (source.kind === 'local') return new ModelLoadError(`llama.cpp could not load "${source.name}": ${detail}`, { cause: e });
  if (/fetch|network|HTTP|CORS/i.test(detail) || e instanceof TypeError) {
    return new ModelDownloadError(
      `The model could not be downloaded from ${source.url} (${detail}). Check the address and that you are online; ` +
        'the server must allow cross-origin requests (CORS). Once downloaded, a model loads from this browser without a network.',
      'network',
    );
  }
  return new ModelLoadError(`llama.cpp could not load the model from ${source.url}: ${detail}`, { cause: e });
}

/** The host every llama.cpp engine of this worker shares. */
export const defaultHost = new WllamaHost();
