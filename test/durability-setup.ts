/** What the durability tests share: a book with a planted answer, engines that die where told, locks, tabs. */
import type { ChatMessage, GenerateOptions, GenerateResult } from '../src/core/generation';
import type { Engine } from '../src/engines/engine';
import { ExtractiveEngine } from '../src/engines/extractive/engine';
import { loadQwenTokenizer, type QwenTokenizer } from '../src/engines/qwen-tokenizer';
import type { RunRequest } from '../src/agent/protocol';
import type { Library } from '../src/library/library';
import type { Runs } from '../src/runs/runs';
import { type RunnerDeps, wireParts } from './runner-setup';
import { Store } from '../src/storage/db';
import { corpusText } from './helpers';
import type { RunEvent } from '../src/agent/protocol';

export const NEEDLE = 'The vault code for the Marlowe archive is 4829137.';
export const QUESTION = 'What is the vault code for the Marlowe archive?';

let tokenizer: Promise<QwenTokenizer> | undefined;
export function qwen(): Promise<QwenTokenizer> {
  return (tokenizer ??= loadQwenTokenizer());
}

/** ~30 KB of Frankenstein with the needle planted past its middle. */
export function bookBytes(): Uint8Array<ArrayBuffer> {
  const excerpt = corpusText('frankenstein.txt').slice(80_000, 110_000);
  const cut = excerpt.indexOf('. ', 17_000) + 2;
  return new TextEncoder().encode(excerpt.slice(0, cut) + NEEDLE + ' ' + excerpt.slice(cut));
}

export function request(documentId: string, extra: Partial<RunRequest> = {}): RunRequest {
  return { documentId, question: QUESTION, engineId: 'extractive', chunkTokens: 600, memoryTokens: 128, ...extra };
}

export const range = (n: number): number[] => [...Array(n).keys()];

/**
 * The extractive engine, except that generation call number `dieAt` never
 * returns: the tab it ran in is gone (closed, crashed, killed) in the middle of
 * that step. Call n of a run with n chunks is the final answer.
 */
export class MortalEngine implements Engine {
  readonly id = 'extractive';
  readonly inner: ExtractiveEngine;
  readonly contextWindow: number;
  calls = 0;
  private reached: () => void = () => undefined;
  /** Resolves once the fatal call has started. */
  readonly dead = new Promise<void>((resolve) => (this.reached = resolve));

  constructor(
    readonly tokenizer: QwenTokenizer,
    private readonly dieAt = -1,
  ) {
    this.inner = new ExtractiveEngine(tokenizer);
    this.contextWindow = this.inner.contextWindow;
  }

  generate(messages: readonly ChatMessage[], options: GenerateOptions): Promise<GenerateResult> {
    if (this.calls++ !== this.dieAt) return this.inner.generate(messages, options);
    this.reached();
    return new Promise(() => undefined);
  }
}

/** Everything a runner published, with a way to wait for an event. */
export class EventLog {
  readonly events: RunEvent[] = [];
  private waiters: { match: (e: RunEvent) => boolean; resolve: (e: RunEvent) => void }[] = [];
  /** Called with each event after it is logged (tests react to revisions here). */
  onEvent: (e: RunEvent) => void = () => undefined;

  publish = (event: RunEvent): void => {
    this.events.push(event);
    this.onEvent(event);
    this.waiters = this.waiters.filter((w) => !(w.match(event) && (w.resolve(event), true)));
  };

  waitFor(match: (e: RunEvent) => boolean): Promise<RunEvent> {
    const seen = this.events.find(match);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve) => this.waiters.push({ match, resolve }));
  }

  status(runId: string, status: string): Promise<RunEvent> {
    return this.waitFor((e) => e.type === 'status' && e.runId === runId && e.status === status);
  }

  revisions(runId: string): number[] {
    return this.events.flatMap((e) => (e.type === 'revision' && e.runId === runId ? [e.index] : []));
  }
}

/**
 * The Web Locks API as the runner uses it (exclusive, first come first served),
 * for tabs simulated in one process. Killing a tab releases what it holds and
 * drops what it waits for, as the browser does when a tab closes or crashes.
 */
export class FakeLocks {
  private held = new Map<string, string>();
  private queue: { name: string; tab: string; grant: () => void }[] = [];

  /** What `withLock` in the worker does with navigator.locks.request, for tab `tab`. */
  forTab(tab: string): (name: string, work: () => Promise<void>) => Promise<void> {
    return (name, work) =>
      new Promise<void>((resolve, reject) => {
        const grant = () => {
          this.held.set(name, tab);
          work()
            .then(resolve, reject)
            .finally(() => {
              if (this.held.get(name) !== tab) return; // the tab was killed meanwhile
              this.held.delete(name);
              this.next(name);
            });
        };
        if (this.held.has(name)) this.queue.push({ name, tab, grant });
        else grant();
      });
  }

  /** What `tryLock` in the worker does with navigator.locks.request(…, { ifAvailable: true }), for tab `tab`. */
  tryForTab(tab: string): (name: string, work: () => Promise<void>) => Promise<boolean> {
    return async (name, work) => {
      if (this.held.has(name)) return false;
      this.held.set(name, tab);
      try {
        await work();
      } finally {
        if (this.held.get(name) === tab) {
          this.held.delete(name);
          this.next(name);
        }
      }
      return true;
    };
  }

  holder(name: string): string | undefined {
    return this.held.get(name);
  }

  waiting(name: string): string[] {
    return this.queue.filter((q) => q.name === name).map((q) => q.tab);
  }

  kill(tab: string): void {
    this.queue = this.queue.filter((q) => q.tab !== tab);
    for (const [name, owner] of [...this.held]) {
      if (owner !== tab) continue;
      this.held.delete(name);
      this.next(name);
    }
  }

  private next(name: string): void {
    const i = this.queue.findIndex((q) => q.name === name);
    if (i < 0) return;
    const [waiter] = this.queue.splice(i, 1);
    waiter!.grant();
  }
}

export interface Tab {
  name: string;
  store: Store;
  engine: MortalEngine;
  log: EventLog;
  runner: Runs;
  library: Library;
}

/**
 * A tab: its own connection to the database, its own runner and engine.
 * Tabs opened with the same `locks` and `channel` share run locks and events,
 * as tabs of one browser do through Web Locks and a BroadcastChannel.
 */
export async function openTab(
  dbName: string,
  options: { name?: string; dieAt?: number; locks?: FakeLocks; channel?: Tab[]; deps?: Partial<RunnerDeps> } = {},
): Promise<Tab> {
  const name = options.name ?? 'tab';
  const store = await Store.open(dbName);
  const engine = new MortalEngine(await qwen(), options.dieAt);
  const log = new EventLog();
  const channel = options.channel;
  const { library, runner } = wireParts({
    store,
    createEngine: async () => engine,
    tokenizerFor: qwen,
    publish: (event) => {
      log.publish(event);
      // A BroadcastChannel reaches every other tab, not the sender, a task later.
      for (const other of channel ?? []) if (other.name !== name) setTimeout(() => other.runner.handleControl(event), 0);
    },
    ...(options.locks ? { withLock: options.locks.forTab(name), tryLock: options.locks.tryForTab(name) } : {}),
    ...options.deps,
  });
  const tab = { name, store, engine, log, runner, library };
  channel?.push(tab);
  return tab;
}

/** A tab that is gone: it hears nothing more and holds no lock. Its unfinished step never returns. */
export function killTab(tab: Tab, locks?: FakeLocks, channel?: Tab[]): void {
  locks?.kill(tab.name);
  if (channel) channel.splice(channel.indexOf(tab), 1);
  tab.store.close();
}

/** Every stored memory of a run, in order. */
export function memories(store: Store, runId: string): Promise<string[]> {
  return store.listMemories(runId);
}

let dbCount = 0;
export function freshDbName(prefix: string): string {
  return `${prefix}-${++dbCount}`;
}
