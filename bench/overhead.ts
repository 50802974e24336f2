/**
 * Per-revision overhead in the app: everything but the engine call (prompt
 * building, the IndexedDB commit, the event to the page, the page's update),
 * over a run of about 1,000 chunks with the extractive engine in Chromium.
 * Baseline: the extractive engine's own step, measured in the same run.
 */
import { readFileSync } from 'node:fs';
import { startApp } from './app';

const PORT = 4392;
// A paper-sized step on a laptop GPU: 1,024 tokens decoded at 40 tokens/s (prefill of the 5,000-token chunk comes on top).
const PAPER_STEP_MS = (1024 / 40) * 1000;

function quantile(sorted: readonly number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

export async function overheadBench(): Promise<void> {
  const app = await startApp(PORT);
  try {
    const page = await (await app.browser.newContext()).newPage();
    await page.goto(`${app.url}/`);
    // Long tasks on the page's main thread: what updating the UI costs.
    await page.evaluate(() => {
      (window as unknown as { __longTasks: number }).__longTasks = 0;
      new PerformanceObserver((list) => {
        for (const e of list.getEntries()) (window as unknown as { __longTasks: number }).__longTasks += e.duration;
      }).observe({ type: 'longtask', buffered: true });
    });
    const book = readFileSync(new URL('../../shared/corpus/frankenstein.txt', import.meta.url));
    await page.getByLabel('Document').setInputFiles({ name: 'frankenstein.txt', mimeType: 'text/plain', buffer: book });
    await page.getByText(/frankenstein\.txt — .*tokens/).waitFor();
    await page.getByLabel('Question').fill('Where did Victor first see the creature after it left the laboratory?');
    await page.getByLabel('Chunk size (tokens)').fill('100');
    const t0 = Date.now();
    await page.getByRole('button', { name: 'Read' }).click();
    await page.getByRole('progressbar', { name: 'Reading progress' }).waitFor();
    await page.waitForFunction(
      () => {
        const bar = document.querySelector('[role=progressbar][aria-label="Reading progress"]');
        return bar && bar.getAttribute('aria-valuenow') === bar.getAttribute('aria-valuemax') && document.body.innerText.includes('Done ·');
      },
      undefined,
      { timeout: 600_000, polling: 500 },
    );
    const wallMs = Date.now() - t0;
    const steps = await page.evaluate(
      () =>
        new Promise<{ committedAt: number; ms: number }[]>((resolve) => {
          const open = indexedDB.open('memagent');
          open.onsuccess = () => {
            const req = open.result.transaction('revisions').objectStore('revisions').getAll();
            req.onsuccess = () => resolve((req.result as { committedAt: number; ms: number }[]).map((r) => ({ committedAt: r.committedAt, ms: r.ms })));
          };
        }),
    );
    const longTaskMs = await page.evaluate(() => (window as unknown as { __longTasks: number }).__longTasks);
    const overhead = steps
      .slice(1)
      .map((s, i) => s.committedAt - steps[i]!.committedAt - s.ms)
      .sort((a, b) => a - b);
    const engine = steps.map((s) => s.ms).sort((a, b) => a - b);
    const median = quantile(overhead, 0.5);
    console.log(`Per-revision overhead: ${steps.length} revisions of Frankenstein at 100 tokens a chunk, extractive engine, Chromium`);
    console.log(`  baseline  extractive engine call           median ${quantile(engine, 0.5).toFixed(1).padStart(6)} ms`);
    console.log(
      `  overhead  prompt + commit + event + page   median ${median.toFixed(1).padStart(6)} ms  p95 ${quantile(overhead, 0.95).toFixed(1)} ms  (target median <= 5 ms; timestamps have 1 ms resolution)`,
    );
    console.log(`  page      long tasks on the main thread    ${(longTaskMs / steps.length).toFixed(2)} ms per revision`);
    console.log(
      `  whole run ${(wallMs / 1000).toFixed(1)} s; overhead is ${((100 * median) / PAPER_STEP_MS).toFixed(3)}% of a paper-sized step (1,024 tokens at 40 tokens/s = ${(PAPER_STEP_MS / 1000).toFixed(1)} s)`,
    );
  } finally {
    await app.close();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await overheadBench();
