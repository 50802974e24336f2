import 'fake-indexeddb/auto';
import { afterEach } from 'vitest';
import type { Engine } from '../src/engines/engine';
import type { Tokenizer } from '../src/core/tokenizer';
import { Runner, type RunnerDeps } from '../src/runner/runner';
import { Store } from '../src/storage/db';
import type { RunEvent } from '../src/agent/protocol';

const stores: Store[] = [];
afterEach(() => stores.splice(0).forEach((s) => s.close()));

/** A runner over a fresh store (closed after each test), reading with `engine`, that records what it publishes. */
export async function testRunner(engine: Engine, tokenizer: Tokenizer, deps: Partial<RunnerDeps> = {}) {
  const store = await Store.open(`memagent-test-${crypto.randomUUID()}`);
  stores.push(store);
  const events: RunEvent[] = [];
  const runner = new Runner({
    store,
    createEngine: async () => engine,
    tokenizerFor: async () => tokenizer,
    publish: (e) => events.push(e),
    ...deps,
  });
  return { store, events, runner };
}

/** Waits until `check` holds, checking every 10 ms, for at most `tries` checks. */
export async function until(check: () => boolean | Promise<boolean>, tries = 3000): Promise<void> {
  for (let i = 0; i < tries && !(await check()); i++) await new Promise((r) => setTimeout(r, 10));
}
