import 'fake-indexeddb/auto';
import { afterEach } from 'vitest';
import type { Engine } from '../src/engines/engine';
import type { Tokenizer } from '../src/core/tokenizer';
import { Library, type LibraryDeps } from '../src/library/library';
import { Runs, type RunsDeps } from '../src/runs/runs';
import { EngineCache } from '../src/jobs/engines';
import type { EngineConfig } from '../src/engines/engine';
import { Store } from '../src/storage/db';
import type { RunEvent } from '../src/agent/protocol';

const stores: Store[] = [];
afterEach(() => stores.splice(0).forEach((s) => s.close()));

/** What the worker gives its library and runs, with engines made by `createEngine` (through the worker's cache). */
export type RunnerDeps = LibraryDeps &
  Omit<RunsDeps, 'library' | 'engines'> & {
    createEngine(engineId: string, config?: EngineConfig): Promise<Engine>;
  };

/** The worker's library and runs over one store, wired as the worker wires them. */
export function wireParts(deps: RunnerDeps): { library: Library; runner: Runs } {
  const library = new Library(deps);
  return { library, runner: new Runs({ ...deps, library, engines: new EngineCache(deps.createEngine) }) };
}

/** A runner over a fresh store (closed after each test), reading with `engine`, that records what it publishes. */
export async function testRunner(engine: Engine, tokenizer: Tokenizer, deps: Partial<RunnerDeps> = {}) {
  const store = await Store.open(`memagent-test-${crypto.randomUUID()}`);
  stores.push(store);
  const events: RunEvent[] = [];
  const { library, runner } = wireParts({
    store,
    createEngine: async () => engine,
    tokenizerFor: async () => tokenizer,
    publish: (e) => events.push(e),
    ...deps,
  });
  return { store, events, runner, library };
}

export { until } from './helpers';
