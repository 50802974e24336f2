/**
 * Opening the inspector and switching revisions for a run of 2,000 revisions
 * against one of 20, in the production build in Chromium. A responsive
 * inspector costs about the same for both (virtual list, one revision's texts
 * read at a time).
 */
import type { Page } from '@playwright/test';
import { DEFAULT_TEMPLATES } from '../src/core/prompts';
import { buildExport } from '../src/storage/export';
import type { RevisionRecord, RunRecord } from '../src/storage/schema';
import { startApp } from './app';

const PORT = 4391;
// Both runs step through the same number of revisions.
const SWITCHES = 19;

function syntheticRun(n: number): string {
  const id = `bench-${n}`;
  const memory = (i: number) =>
    Array.from({ length: 12 }, (_, s) => `Note ${s} written at chunk ${i}: the traveller crossed the ice with ${i * 7 + s} dogs.`).join('\n');
  const run: RunRecord = {
    id,
    documentId: 'none',
    documentName: 'benchmark.txt',
    question: `Benchmark run with ${n} revisions`,
    engineId: 'extractive',
    settings: { requestedChunkTokens: 5000, chunkTokens: 5000, memoryTokens: 1024, contextTokens: 8192, temperature: 0.7, topP: 0.95 },
    templates: { ...DEFAULT_TEMPLATES },
    chunks: Array.from({ length: n }, (_, i) => ({ start: i * 20000, end: (i + 1) * 20000, tokens: 5000 })),
    status: 'done',
    nextChunk: n,
    memory: memory(n - 1),
    answer: 'benchmark',
    createdAt: 0,
    updatedAt: 0,
  };
  const revisions: RevisionRecord[] = Array.from({ length: n }, (_, i) => ({
    runId: id,
    index: i,
    memoryTokens: 300,
    wordsAdded: 20,
    wordsRemoved: 18,
    start: i * 20000,
    end: (i + 1) * 20000,
    chunkTokens: 5000,
    promptTokens: 6500,
    completionTokens: 300,
    ms: 25000,
    finishReason: 'stop',
    retries: 0,
    committedAt: i,
  }));
  return JSON.stringify(
    buildExport({
      run,
      revisions,
      memories: revisions.map((r) => memory(r.index)),
    }),
  );
}

async function measure(page: Page, url: string, n: number): Promise<{ openMs: number; switchMs: number }> {
  await page.goto(`${url}/#/library`);
  await page.getByLabel('Import run').setInputFiles({ name: 'run.json', mimeType: 'application/json', buffer: Buffer.from(syntheticRun(n)) });
  const section = page.getByRole('region', { name: 'Section' });
  await section.getByText(`Section ${n} of ${n}`).waitFor();

  const t0 = performance.now();
  await page.goto(`${url}/?run=bench-${n}`);
  await page
    .getByRole('region', { name: 'Memory', exact: true })
    .getByText(`written at chunk ${n - 1}:`)
    .first()
    .waitFor();
  const openMs = performance.now() - t0;

  await page
    .getByRole('listitem', { name: new RegExp(`^Revision ${n}:`) })
    .getByRole('button')
    .click();
  const t1 = performance.now();
  for (let i = 1; i <= SWITCHES; i++) {
    await page.keyboard.press('ArrowUp');
    await page
      .getByRole('region', { name: 'Memory', exact: true })
      .getByText(`written at chunk ${n - 1 - i}:`)
      .first()
      .waitFor();
  }
  return { openMs, switchMs: (performance.now() - t1) / SWITCHES };
}

export async function inspectorBench(): Promise<void> {
  const app = await startApp(PORT);
  try {
    const results: Record<number, { openMs: number; switchMs: number }> = {};
    for (const n of [20, 2000]) {
      const context = await app.browser.newContext();
      results[n] = await measure(await context.newPage(), app.url, n);
      await context.close();
    }
    const small = results[20]!;
    const large = results[2000]!;
    console.log('Inspector: 2,000 revisions against 20 (baseline), production build in Chromium');
    console.log(
      `  open run      20: ${small.openMs.toFixed(0).padStart(5)} ms   2000: ${large.openMs.toFixed(0).padStart(5)} ms   ratio ${(large.openMs / small.openMs).toFixed(2)}x`,
    );
    console.log(
      `  switch (avg)  20: ${small.switchMs.toFixed(1).padStart(5)} ms   2000: ${large.switchMs.toFixed(1).padStart(5)} ms   ratio ${(large.switchMs / small.switchMs).toFixed(2)}x`,
    );
  } finally {
    await app.close();
  }
}
