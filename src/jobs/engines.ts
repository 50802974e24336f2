import type { Engine, EngineConfig } from '../engines/engine';

/** Which engine instance a job uses: one per id and configuration. */
export function engineKey(engineId: string, config?: EngineConfig): string {
  return `${engineId} ${JSON.stringify(config ?? {})}`;
}

/**
 * One engine per id and configuration, shared by every run and sweep of this
 * worker: a model loaded for one stays loaded for the next. An engine that
 * failed to open is forgotten, so that the next job tries again.
 */
export class EngineCache {
  private readonly engines = new Map<string, Promise<Engine>>();

  constructor(private readonly create: (engineId: string, config?: EngineConfig) => Promise<Engine>) {}

  open(engineId: string, config?: EngineConfig): Promise<Engine> {
    const key = engineKey(engineId, config);
    let engine = this.engines.get(key);
    if (!engine) {
      engine = this.create(engineId, config);
      engine.catch(() => this.engines.delete(key));
      this.engines.set(key, engine);
    }
    return engine;
  }
}
