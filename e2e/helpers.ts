import { readFileSync } from 'node:fs';
import { expect, type Page } from '@playwright/test';
import { HOLD_CHANNEL } from '../src/agent/events';
import { type OpenAITestServer, startOpenAIServer } from '../test/support/openai-server';

export const CORPUS = new URL('../../shared/corpus/', import.meta.url);

export const PLANTED = {
  sentence: 'The vault code for the Marlowe archive is 4829137.',
  question: 'What is the vault code for the Marlowe archive?',
  code: '4829137',
};

/**
 * Frankenstein as its real bytes (BOM, CRLF) with one sentence planted as its own
 * paragraph at the first paragraph break after `fraction` of the book.
 */
export function plantedBook(fraction = 0.6, sentence = PLANTED.sentence): Buffer {
  return bookWith([[fraction, sentence]]);
}

/** Frankenstein as its real bytes with each sentence planted as its own paragraph, at the first paragraph break after its fraction of the book. */
export function bookWith(planted: readonly (readonly [fraction: number, sentence: string])[]): Buffer {
  let text = readFileSync(new URL('frankenstein.txt', CORPUS)).toString('latin1');
  // The latest first, so that each is placed by the book's length before the earlier ones go in.
  for (const [fraction, sentence] of [...planted].sort((a, b) => b[0] - a[0])) {
    const at = text.indexOf('\r\n\r\n', Math.floor(text.length * fraction));
    text = `${text.slice(0, at)}\r\n\r\n${sentence}${text.slice(at)}`;
  }
  return Buffer.from(text, 'latin1'); // latin1 both ways keeps the UTF-8 bytes as they are
}

/**
 * Readers of the app's IndexedDB that run in the page itself, as plain functions
 * so that any driver can evaluate them (Playwright here, the other engines' drivers in e2e-engines).
 */
export const inPage = {
  /** The number of records in each store. */
  counts: (): Promise<Record<string, number>> =>
    new Promise<Record<string, number>>((resolve, reject) => {
      const open = indexedDB.open('memagent');
      open.onerror = () => reject(open.error);
      open.onsuccess = () => {
        const db = open.result;
        const names = [...db.objectStoreNames];
        if (names.length === 0) return resolve({});
        const tx = db.transaction(names, 'readonly');
        const counts: Record<string, number> = {};
        for (const name of names) {
          const req = tx.objectStore(name).count();
          req.onsuccess = () => (counts[name] = req.result);
        }
        tx.oncomplete = () => {
          db.close();
          resolve(counts);
        };
      };
    }),

  /** Every record of one store. */
  records: <T>(name: string): Promise<T[]> =>
    new Promise<T[]>((resolve, reject) => {
      const open = indexedDB.open('memagent');
      open.onerror = () => reject(open.error);
      open.onsuccess = () => {
        const req = open.result.transaction(name, 'readonly').objectStore(name).getAll();
        req.onsuccess = () => {
          open.result.close();
          resolve(req.result as T[]);
        };
        req.onerror = () => reject(req.error);
      };
    }),

  /** Every run and revision, read in one transaction. */
  runsAndRevisions: <Run, Revision>(): Promise<{ runs: Run[]; revisions: Revision[] }> =>
    new Promise<{ runs: Run[]; revisions: Revision[] }>((resolve, reject) => {
      const open = indexedDB.open('memagent');
      open.onerror = () => reject(open.error);
      open.onsuccess = () => {
        const tx = open.result.transaction(['runs', 'revisions'], 'readonly');
        const runs = tx.objectStore('runs').getAll();
        const revisions = tx.objectStore('revisions').getAll();
        tx.oncomplete = () => {
          open.result.close();
          resolve({ runs: runs.result as Run[], revisions: revisions.result as Revision[] });
        };
      };
    }),

  /** The chunk index of every revision, per run id, in key order. */
  revisionIndexes: (): Promise<Record<string, number[]>> =>
    new Promise<Record<string, number[]>>((resolve, reject) => {
      const open = indexedDB.open('memagent');
      open.onerror = () => reject(open.error);
      open.onsuccess = () => {
        const db = open.result;
        const req = db.transaction('revisions', 'readonly').objectStore('revisions').getAllKeys();
        req.onsuccess = () => {
          const byRun: Record<string, number[]> = {};
          for (const key of req.result as [string, number][]) (byRun[key[0]] ??= []).push(key[1]);
          db.close();
          resolve(byRun);
        };
      };
    }),
};

/** Counts the records of each IndexedDB store, read in the page itself. */
export function storedCounts(page: Page): Promise<Record<string, number>> {
  return page.evaluate(inPage.counts);
}

/** Every record of one IndexedDB store, read in the page itself. */
export function storedRecords<T>(page: Page, store: string): Promise<T[]> {
  return page.evaluate(inPage.records, store) as Promise<T[]>;
}

/** Every stored run and revision, read in one transaction in the page itself. */
export function storedRunsAndRevisions<Run, Revision>(page: Page): Promise<{ runs: Run[]; revisions: Revision[] }> {
  return page.evaluate(inPage.runsAndRevisions) as Promise<{ runs: Run[]; revisions: Revision[] }>;
}

/** The chunk index of every stored revision, per run id, in key order. */
export function storedRevisionIndexes(page: Page): Promise<Record<string, number[]>> {
  return page.evaluate(inPage.revisionIndexes);
}

/**
 * In the page, before its own scripts: takes the run's lock, so that its reader
 * waits (as behind another tab) until the test has looked at storage and calls
 * `__release` (releaseRun). The run then moves on only while the test watches
 * it, however fast this machine reads.
 */
export function lockRun(runId: string): void {
  void navigator.locks.request(
    `memagent-run-${runId}`,
    () => new Promise<void>((resolve) => ((window as unknown as { __release?: () => void }).__release = resolve)),
  );
}

/** Lets the run that lockRun holds read on. */
export async function releaseRun(page: Page): Promise<void> {
  await page.waitForFunction(() => typeof (window as unknown as { __release?: () => void }).__release === 'function');
  await page.evaluate(() => (window as unknown as { __release: () => void }).__release());
}

/** Ticks exactly `names` in the checkbox group `group`. */
export async function tickOnly(page: Page, group: string, names: readonly string[]): Promise<void> {
  const boxes = page.getByRole('group', { name: group }).getByRole('checkbox');
  for (const box of await boxes.all()) await box.uncheck();
  for (const name of names) await page.getByRole('group', { name: group }).getByRole('checkbox', { name, exact: true }).check();
}

export function range(n: number): number[] {
  return Array.from({ length: n }, (_, i) => i);
}

/** Reads a book through the form and waits for the answer. */
export async function readBook(
  page: Page,
  book: Buffer,
  options: { question?: string; chunkTokens?: number; memoryTokens?: number; wait?: boolean; beforeRead?: () => Promise<void> } = {},
): Promise<void> {
  await page.getByLabel('Document').setInputFiles({ name: 'frankenstein.txt', mimeType: 'text/plain', buffer: book });
  await page.getByText(/frankenstein\.txt — .*tokens/).waitFor();
  await page.getByLabel('Question').fill(options.question ?? PLANTED.question);
  if (options.chunkTokens) await page.getByLabel('Chunk size (tokens)').fill(String(options.chunkTokens));
  if (options.memoryTokens) await page.getByLabel('Memory size (tokens)').fill(String(options.memoryTokens));
  await options.beforeRead?.();
  await page.getByRole('button', { name: 'Read' }).click();
  if (options.wait !== false) {
    // The answer's own words; its sources may quote them again.
    await page.getByRole('region', { name: 'Answer' }).getByText(PLANTED.code).first().waitFor({ timeout: 90_000 });
  }
}

/**
 * Records the browser's tasks with Chrome's tracing from now on; `stop` gives
 * the longest task the page's main thread ran, as its own CPU time (what the
 * app put on it) and as wall-clock time (which a busy machine stretches).
 */
export async function traceMainThread(page: Page): Promise<{ stop(): Promise<{ cpuMs: number; wallMs: number; tasks: number }> }> {
  const browser = page.context().browser()!;
  await browser.startTracing(page, { categories: ['toplevel'] });
  return {
    async stop() {
      const trace = JSON.parse((await browser.stopTracing()).toString('utf8')) as { traceEvents: TraceEvent[] };
      const main = new Set(
        trace.traceEvents.filter((e) => e.ph === 'M' && e.name === 'thread_name' && e.args?.name === 'CrRendererMain').map((e) => `${e.pid}:${e.tid}`),
      );
      const tasks = trace.traceEvents.filter((e) => e.ph === 'X' && e.name === 'ThreadControllerImpl::RunTask' && main.has(`${e.pid}:${e.tid}`));
      return {
        cpuMs: Math.max(0, ...tasks.map((e) => (e.tdur ?? e.dur ?? 0) / 1000)),
        wallMs: Math.max(0, ...tasks.map((e) => (e.dur ?? 0) / 1000)),
        tasks: tasks.length,
      };
    },
  };
}

interface TraceEvent {
  ph: string;
  name: string;
  pid: number;
  tid: number;
  dur?: number;
  tdur?: number;
  args?: { name?: string };
}

/**
 * An OpenAI-compatible test server of the test's own, open to the page's
 * origin: what it holds (a step the test keeps in flight) holds no other test.
 */
export function ownOpenAIServer(): Promise<OpenAITestServer> {
  return startOpenAIServer({ allowedOrigin: `http://127.0.0.1:${Number(process.env.E2E_PORT ?? 4173)}` });
}

/** Runs `body` with an OpenAI-compatible test server of its own (see ownOpenAIServer), stopped afterwards. */
export async function withOwnServer(body: (server: OpenAITestServer) => Promise<void>): Promise<void> {
  const server = await ownOpenAIServer();
  try {
    await body(server);
  } finally {
    await server.stop();
  }
}

/**
 * Opens the app, chooses `server` and starts reading `book` through it; resolves once the server holds the
 * step after the first `steps`: the run has stored exactly `steps` revisions and has the next one in flight.
 */
export async function readHeldAt(page: Page, server: OpenAITestServer, book: Buffer, steps: number, chunkTokens = 1000): Promise<void> {
  await page.goto('/');
  await connectServer(page, server.url);
  const held = server.holdAfterNext(steps);
  await readBook(page, book, { chunkTokens, wait: false });
  await held;
}

/** Chooses the OpenAI-compatible engine at `baseUrl` in the page's form and connects to it. */
export async function chooseServer(page: Page, baseUrl: string, key?: string): Promise<void> {
  await page.getByRole('combobox', { name: 'Engine' }).selectOption({ label: 'OpenAI-compatible server' });
  await page.getByLabel('Base URL', { exact: true }).fill(baseUrl);
  if (key) await page.getByLabel('API key', { exact: true }).fill(key);
  await page.getByRole('button', { name: 'Connect' }).click();
}

/** Chooses the server as `chooseServer` does and waits until the form says it is connected. */
export async function connectServer(page: Page, baseUrl: string): Promise<void> {
  await chooseServer(page, baseUrl);
  await expect(page.getByRole('status').filter({ hasText: 'Connected' })).toBeVisible();
}

/**
 * The hold on local engines' steps, as plain functions run in the page, so that any driver can evaluate them (Playwright
 * here, the other engines' drivers in e2e-engines). See holdSteps.
 */
export const stepHold = {
  /** Holds every run's step from chunk `index` on; resolves once the page's worker has the gate in place. */
  hold: ({ channel, index }: { channel: string; index: number }): Promise<void> =>
    new Promise<void>((resolve) => {
      const w = window as unknown as { __held?: { runId: string; index: number }[]; __holdChannel?: BroadcastChannel };
      w.__held ??= [];
      const c = (w.__holdChannel ??= new BroadcastChannel(channel));
      // The worker may not listen yet: ask again until it says the gate is in place.
      const ask = setInterval(() => c.postMessage({ type: 'hold', index }), 50);
      c.onmessage = (e: MessageEvent<{ type: string; runId: string; index: number }>) => {
        if (e.data.type === 'held') w.__held!.push({ runId: e.data.runId, index: e.data.index });
        if (e.data.type === 'holding' && e.data.index === index) {
          clearInterval(ask);
          resolve();
        }
      };
      c.postMessage({ type: 'hold', index });
    }),
  /** How many runs have had their step held at chunk `index`. */
  runs: (index: number): number =>
    new Set((window as unknown as { __held?: { runId: string; index: number }[] }).__held?.filter((h) => h.index === index).map((h) => h.runId)).size,
  /** Lets every held step go on, and holds no more. */
  release: (channel: string): void => new BroadcastChannel(channel).postMessage({ type: 'release' }),
};

/**
 * Holds every run's step from chunk `index` on, in every tab (see HoldMessage): a run with a local engine
 * waits there, its step in hand, until `releaseSteps` or a later hold. Resolves once this page's worker has
 * the gate in place; the page keeps a list of the steps held (`heldSteps`).
 */
export async function holdSteps(page: Page, index: number): Promise<void> {
  await page.evaluate(stepHold.hold, { channel: HOLD_CHANNEL, index });
}

/** Waits until a run holds at chunk `index` (after `holdSteps` in this page). */
export async function heldAt(page: Page, index: number): Promise<void> {
  await page.waitForFunction((i) => (window as unknown as { __held?: { index: number }[] }).__held?.some((h) => h.index === i) ?? false, index);
}

/** How many runs have their step held at chunk `index` (after `holdSteps` in this page). */
export function heldRuns(page: Page, index: number): Promise<number> {
  return page.evaluate(stepHold.runs, index);
}

/** Lets every held step go on, and holds no more. */
export async function releaseSteps(page: Page): Promise<void> {
  await page.evaluate(stepHold.release, HOLD_CHANNEL);
}

/**
 * Keeps a read transaction on IndexedDB store `store` open in the page until the returned function is
 * called: a write to that store (a book's text, say) waits until then, however fast this machine is. The
 * app's database must exist already (the page's worker opens it at start).
 */
export async function holdStore(page: Page, store: string): Promise<() => Promise<void>> {
  await page.waitForFunction(async () => (await indexedDB.databases()).some((d) => d.name === 'memagent' && (d.version ?? 0) > 0));
  await page.evaluate(
    (name) =>
      new Promise<void>((resolve, reject) => {
        const w = window as unknown as { __storeHeld?: boolean };
        w.__storeHeld = true;
        const open = indexedDB.open('memagent');
        open.onerror = () => reject(open.error);
        open.onsuccess = () => {
          const tx = open.result.transaction(name, 'readonly');
          const keep = () => {
            if (w.__storeHeld) tx.objectStore(name).count().onsuccess = keep;
            else open.result.close();
          };
          keep();
          resolve();
        };
      }),
    store,
  );
  return () => page.evaluate(() => void ((window as unknown as { __storeHeld?: boolean }).__storeHeld = false));
}
