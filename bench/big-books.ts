/**
 * Books of any size, in the app in Chromium:
 * - a 15 MB book from upload to its first step, read as a stream (readable
 *   once its first part is decoded and stored; a read starts with its first
 *   chunk while the rest arrives) beside the baseline measured in the same
 *   run: the same app built with each text decoded whole and written as one
 *   value with its record before it can be read (how texts were stored before
 *   parts and streams);
 * - 100 MB and 250 MB texts: time until readable and until stored, the first
 *   step of a read started as soon as it is readable, the longest task on the
 *   page's main thread (wall-clock and its own CPU time) and the worker's peak
 *   heap (JavaScript heap and ArrayBuffers, sampled by DevTools every 20 ms)
 *   against the file's size.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Browser } from '@playwright/test';
import { build } from 'vite';
import { traceMainThread } from '../e2e/helpers';
import { firstStepAt, startApp } from './app';

const PORT = Number(process.env.BENCH_PORT ?? 4380);
const MB = 1024 * 1024;

const FRANKENSTEIN = Buffer.from(readFileSync(new URL('../../shared/corpus/frankenstein.txt', import.meta.url), 'utf8').replace(/^\uFEFF/, ''));

/** Frankenstein's text (curly quotes and all) repeated to `bytes` bytes of UTF-8, ending in ASCII. */
function book(bytes: number): Buffer {
  const one = FRANKENSTEIN;
  const out = Buffer.alloc(bytes, 'a');
  for (let at = 0; at + one.length <= bytes; at += one.length) one.copy(out, at);
  return out;
}

/** The worker's heap (JavaScript objects and ArrayBuffers), asked of DevTools every 20 ms until stopped. */
async function sampleWorkerHeap(browser: Browser): Promise<{ now(): Promise<number>; stop(): Promise<number> }> {
  const cdp = await browser.newBrowserCDPSession();
  const { targetInfos } = await cdp.send('Target.getTargets');
  const worker = targetInfos.find((t) => t.type === 'worker' && t.url.includes('agent.worker'));
  if (!worker) throw new Error('the app has no agent worker to measure');
  const { sessionId } = await cdp.send('Target.attachToTarget', { targetId: worker.targetId, flatten: false });
  let next = 1;
  const pending = new Map<number, (r: { usedSize: number; backingStorageSize?: number }) => void>();
  cdp.on('Target.receivedMessageFromTarget', (m) => {
    const msg = JSON.parse(m.message) as { id?: number; result?: { usedSize: number; backingStorageSize?: number } };
    if (msg.id !== undefined && msg.result) pending.get(msg.id)?.(msg.result);
  });
  const now = async () => {
    const id = next++;
    const reply = new Promise<{ usedSize: number; backingStorageSize?: number }>((r) => pending.set(id, r));
    await cdp.send('Target.sendMessageToTarget', { sessionId, message: JSON.stringify({ id, method: 'Runtime.getHeapUsage' }) });
    const r = await reply;
    return r.usedSize + (r.backingStorageSize ?? 0);
  };
  let peak = 0;
  let running = true;
  const loop = (async () => {
    while (running) {
      peak = Math.max(peak, await now());
      await new Promise((r) => setTimeout(r, 20));
    }
  })();
  return {
    now,
    async stop() {
      running = false;
      await loop;
      await cdp.detach();
      return peak;
    },
  };
}

/** The worker's `memagent:` marks (see src/jobs/marks.ts), as wall-clock milliseconds comparable with the page's Date.now(). */
export async function workerMarks(browser: Browser): Promise<Record<string, number>> {
  const cdp = await browser.newBrowserCDPSession();
  try {
    const { targetInfos } = await cdp.send('Target.getTargets');
    const worker = targetInfos.find((t) => t.type === 'worker' && t.url.includes('agent.worker'));
    if (!worker) return {};
    const { sessionId } = await cdp.send('Target.attachToTarget', { targetId: worker.targetId, flatten: false });
    const reply = new Promise<string>((resolve) =>
      cdp.on('Target.receivedMessageFromTarget', (m) => {
        const msg = JSON.parse(m.message) as { id?: number; result?: { result: { value: string } } };
        if (msg.id === 1 && msg.result) resolve(msg.result.result.value);
      }),
    );
    const expression =
      "JSON.stringify(Object.fromEntries(performance.getEntriesByType('mark').filter((m) => m.name.startsWith('memagent:'))" +
      '.map((m) => [m.name.slice(9), performance.timeOrigin + m.startTime])))';
    await cdp.send('Target.sendMessageToTarget', { sessionId, message: JSON.stringify({ id: 1, method: 'Runtime.evaluate', params: { expression } }) });
    return JSON.parse(await reply) as Record<string, number>;
  } finally {
    await cdp.detach();
  }
}

/** Every running process with its parent, from /proc. */
function processes(): [pid: number, parent: number][] {
  const out: [number, number][] = [];
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      out.push([Number(pid), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1])]);
    } catch {
      // a process that ended meanwhile
    }
  }
  return out;
}

/**
 * The resident memory of this benchmark's Chromium renderers (the page and its
 * worker live in one): `reset` makes the kernel's high-water mark start from
 * now (/proc/<pid>/clear_refs), `peakGrowth` gives the most any of them grew
 * above what it held at the reset. Linux only; null elsewhere.
 */
function rendererMemory(): { peakGrowth(): number } | null {
  if (process.platform !== 'linux') return null;
  const all = processes();
  const browsers = all.filter(([pid, parent]) => parent === process.pid && /chrom/i.test(readFileSync(`/proc/${pid}/cmdline`, 'utf8')));
  const tree = new Set(browsers.map(([pid]) => pid));
  for (let grew = true; grew;) {
    grew = false;
    for (const [pid, parent] of all) if (tree.has(parent) && !tree.has(pid)) grew = tree.add(pid) !== undefined;
  }
  const renderers = [...tree].filter((pid) => {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('--type=renderer');
    } catch {
      return false;
    }
  });
  const kb = (pid: number, field: string) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) * 1024;
  const before = new Map<number, number>();
  for (const pid of renderers) {
    try {
      writeFileSync(`/proc/${pid}/clear_refs`, '5');
      before.set(pid, kb(pid, 'VmRSS'));
    } catch {
      // not ours to reset, or ended
    }
  }
  if (before.size === 0) return null;
  return {
    peakGrowth: () => Math.max(...[...before].map(([pid, rss]) => kb(pid, 'VmHWM') - rss)),
  };
}

interface Imported {
  /** Upload → the book shown as readable in the Read form. */
  usableMs: number;
  /** Upload → the Import progress bar gone: the whole text stored. */
  storedMs: number;
  /** Press on Read (as soon as readable) → the first step's engine call. */
  firstStepMs: number;
  sawProgressBar: boolean;
  longestWallMs?: number;
  longestCpuMs?: number;
  heapBefore?: number;
  heapPeak?: number;
  /** The most the renderer holding the page and its worker grew in resident memory. */
  rendererGrowth?: number;
  /** Milliseconds in each stage from upload to the first step (the press on Read not counted). */
  stages: Record<string, number>;
}

/** The stages of an import and of a read's start, in order, each named by the mark that ends it. */
const STAGES: [from: string, to: string, label: string][] = [
  ['upload', 'import-file', 'file to the worker'],
  // A text read as a stream:
  ['import-file', 'stream-head', 'first slice read'],
  ['stream-head', 'import-usable', 'decoded to its first part, stored'],
  // A file read whole:
  ['import-file', 'import-bytes', 'file read'],
  ['import-bytes', 'import-read', 'decoded and hashed'],
  ['import-read', 'import-counted', 'tokens estimated'],
  ['import-counted', 'import-usable', 'first part stored'],
  ['import-usable', 'usable', 'shown'],
  ['read', 'run-requested', 'Read to the worker'],
  ['run-requested', 'run-stored', 'run planned and stored'],
  ['run-stored', 'run-reading', 'reading begun'],
  ['run-reading', 'first', 'first chunk cut, engine called'],
];

async function importBook(browser: Browser, url: string, path: string, options: { measure: boolean }): Promise<Imported> {
  const context = await browser.newContext();
  const page = await context.newPage();
  try {
    await page.goto(`${url}/`);
    await page.getByRole('button', { name: 'Read' }).waitFor();
    // A person drops a book into a settled page: the offline cache installed, the worker's tokenizer loaded.
    await page.evaluate(() => navigator.serviceWorker?.ready);
    await page.waitForTimeout(2000);
    await page.getByLabel('Question').fill('Where did Victor first see the creature after it left the laboratory?');
    await page.evaluate(() => {
      const marks = { uploadAt: 0, usableAt: 0, storedAt: 0, readAt: 0, bar: false, longest: 0 };
      (window as unknown as { __marks: typeof marks }).__marks = marks;
      document.addEventListener('change', () => (marks.uploadAt ||= Date.now()), true);
      document.addEventListener('submit', () => (marks.readAt ||= Date.now()), true);
      new MutationObserver(() => {
        const bar = document.querySelector('[role=progressbar][aria-label="Import progress"]');
        marks.bar ||= bar !== null;
        if (!marks.usableAt && /book\.txt — .*tokens/.test(document.body.innerText)) marks.usableAt = Date.now();
        if (marks.usableAt && marks.bar && !bar) marks.storedAt ||= Date.now();
      }).observe(document.body, { subtree: true, childList: true, characterData: true });
      new PerformanceObserver((list) => {
        for (const e of list.getEntries()) marks.longest = Math.max(marks.longest, e.duration);
      }).observe({ type: 'longtask' });
    });
    const heap = options.measure ? await sampleWorkerHeap(browser) : null;
    const heapBefore = await heap?.now();
    const trace = options.measure ? await traceMainThread(page) : null;
    const rss = options.measure ? rendererMemory() : null;
    await page.getByLabel('Document').setInputFiles(path);
    await page.getByText(/book\.txt — .*tokens/).waitFor({ timeout: 600_000 });
    await page.getByRole('button', { name: 'Read' }).click();
    await page.waitForFunction(
      () => Number(document.querySelector('[role=progressbar][aria-label="Reading progress"]')?.getAttribute('aria-valuenow')) >= 1,
      undefined,
      { timeout: 600_000 },
    );
    await page.getByRole('button', { name: 'Pause' }).click();
    await page.waitForFunction(() => (window as unknown as { __marks: { storedAt: number } }).__marks.storedAt > 0, undefined, { timeout: 600_000 });
    const longest = await trace?.stop();
    const heapPeak = await heap?.stop();
    const rendererGrowth = rss?.peakGrowth();
    const marks = await page.evaluate(
      () => (window as unknown as { __marks: { uploadAt: number; usableAt: number; storedAt: number; readAt: number; bar: boolean; longest: number } }).__marks,
    );
    const worker = await workerMarks(browser);
    const first = await firstStepAt(page);
    const at: Record<string, number> = { ...worker, upload: marks.uploadAt, usable: marks.usableAt, read: marks.readAt, first };
    const stages = Object.fromEntries(STAGES.filter(([a, b]) => at[a] && at[b]).map(([a, b, label]) => [label, at[b]! - at[a]!]));
    return {
      stages,
      usableMs: marks.usableAt - marks.uploadAt,
      storedMs: marks.storedAt - marks.uploadAt,
      // The first step began when its engine call began: commit time less the call's own time.
      firstStepMs: first - marks.readAt,
      sawProgressBar: marks.bar,
      ...(longest ? { longestWallMs: Math.max(marks.longest, longest.wallMs), longestCpuMs: longest.cpuMs } : {}),
      ...(heapPeak !== undefined ? { heapBefore, heapPeak } : {}),
      ...(rendererGrowth !== undefined ? { rendererGrowth } : {}),
    };
  } finally {
    await context.close();
  }
}

/** The app, or (onePart) the app with each text stored as one value with its record: the baseline. */
async function buildApp(outDir: string, onePart: boolean): Promise<void> {
  await build({
    configFile: 'vite.config.ts',
    logLevel: 'error',
    build: { outDir, emptyOutDir: true },
    resolve: onePart
      ? {
          alias: [
            { find: /^\.\.\/core\/text-parts$/, replacement: resolve('bench/one-part.ts') },
            { find: /^\.\/stream-import$/, replacement: resolve('bench/no-stream.ts') },
          ],
        }
      : {},
  });
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

export async function bigBooksBench(): Promise<void> {
  await buildApp('dist-bench-parts', false);
  await buildApp('dist-bench-one', true);
  const parts = await startApp(PORT, 'dist-bench-parts', { built: true });
  const one = await startApp(PORT + 1, 'dist-bench-one', { built: true });
  const dir = mkdtempSync(join(tmpdir(), 'memagent-big-'));
  const ms = (n: number) => `${n.toFixed(0).padStart(6)} ms`;
  try {
    // 15 MB: Frankenstein x34, as the first-chunk benchmark reads it; runs alternate between the two builds.
    const path = join(dir, 'book.txt');
    const fifteen = book(34 * FRANKENSTEIN.length);
    writeFileSync(path, fifteen);
    const runs: { parts: Imported[]; one: Imported[] } = { parts: [], one: [] };
    for (let i = 0; i < 3; i++) {
      runs.one.push(await importBook(one.browser, one.url, path, { measure: false }));
      runs.parts.push(await importBook(parts.browser, parts.url, path, { measure: false }));
    }
    const summary = (rs: Imported[]) => {
      const usable = median(rs.map((r) => r.usableMs));
      const first = median(rs.map((r) => r.firstStepMs));
      return { usable, first, total: usable + first, stored: median(rs.map((r) => r.storedMs)) };
    };
    const base = summary(runs.one);
    const now = summary(runs.parts);
    console.log(`Upload to first step, ${(fifteen.length / 1e6).toFixed(1)} MB book, app in Chromium (median of 3; the press on Read not counted)`);
    console.log(
      `  baseline  text as one value, stored before it is readable  usable ${ms(base.usable)} + Read to first step ${ms(base.first)} = ${ms(base.total)}`,
    );
    console.log(
      `  stream    readable once its first part is stored         usable ${ms(now.usable)} + Read to first step ${ms(now.first)} = ${ms(now.total)}  ` +
        `(${(base.total / now.total).toFixed(1)}x sooner; target <= 300 ms; whole text stored after ${ms(now.stored).trim()})`,
    );

    console.log(
      '  where the time goes, as a stream (median ms): ' +
        STAGES.map(([, , label]) => label)
          .filter((label) => runs.parts.every((r) => r.stages[label] !== undefined))
          .map((label) => `${label} ${median(runs.parts.map((r) => r.stages[label]!)).toFixed(0)}`)
          .join(', '),
    );

    // From here on one browser runs: its renderers are the ones measured.
    await one.close();
    console.log('Large texts, app in Chromium: readable, first step of a read started then, stored; main thread; memory');
    for (const size of [100, 250]) {
      const big = book(size * MB);
      writeFileSync(path, big);
      const r = await importBook(parts.browser, parts.url, path, { measure: true });
      const heapX = (r.heapPeak! / big.length).toFixed(2);
      console.log(
        `  ${String(size).padStart(3)} MB   readable ${ms(r.usableMs)}, first step ${ms(r.firstStepMs)} later, stored ${ms(r.storedMs)}; ` +
          `progress bar ${r.sawProgressBar ? 'shown' : 'NOT shown'}; longest main-thread task ${r.longestWallMs!.toFixed(0)} ms (${r.longestCpuMs!.toFixed(0)} ms CPU; target < 100 ms); ` +
          `worker heap peak ${(r.heapPeak! / MB).toFixed(0)} MB = ${heapX}x the file (before ${(r.heapBefore! / MB).toFixed(0)} MB; target <= 3x)` +
          (r.rendererGrowth !== undefined
            ? `; the tab's process grew by at most ${(r.rendererGrowth / MB).toFixed(0)} MB = ${(r.rendererGrowth / big.length).toFixed(2)}x`
            : ''),
      );
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
    await parts.close();
    await one.close().catch(() => undefined);
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await bigBooksBench();
