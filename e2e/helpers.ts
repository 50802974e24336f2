import { readFileSync } from 'node:fs';
import type { Page } from '@playwright/test';

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
  const original = readFileSync(new URL('frankenstein.txt', CORPUS)).toString('latin1');
  const at = original.indexOf('\r\n\r\n', Math.floor(original.length * fraction));
  const planted = original.slice(0, at) + `\r\n\r\n${sentence}` + original.slice(at);
  return Buffer.from(planted, 'latin1'); // latin1 both ways keeps the UTF-8 bytes as they are
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
  options: { question?: string; chunkTokens?: number; memoryTokens?: number; wait?: boolean } = {},
): Promise<void> {
  await page.getByLabel('Document').setInputFiles({ name: 'frankenstein.txt', mimeType: 'text/plain', buffer: book });
  await page.getByText(/frankenstein\.txt — .*tokens/).waitFor();
  await page.getByLabel('Question').fill(options.question ?? PLANTED.question);
  if (options.chunkTokens) await page.getByLabel('Chunk size (tokens)').fill(String(options.chunkTokens));
  if (options.memoryTokens) await page.getByLabel('Memory size (tokens)').fill(String(options.memoryTokens));
  await page.getByRole('button', { name: 'Read' }).click();
  if (options.wait !== false) {
    await page.getByRole('region', { name: 'Answer' }).getByText(PLANTED.code).waitFor({ timeout: 90_000 });
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
