/**
 * Tracing the sources of a run of 2,000 revisions in the app's own worker
 * (production build, Chromium): the run is imported beside its book, and the
 * worker traces its answer as it does for every import. The worker's marks
 * (src/jobs/marks.ts) time reading the run's memories from IndexedDB, and the
 * tracing itself (which reads the sections it looks at); the page's clock,
 * import to the sources shown.
 */
import { createHash } from 'node:crypto';
import { DEFAULT_TEMPLATES } from '../src/core/prompts';
import { buildExport } from '../src/storage/export';
import type { RevisionRecord, RunRecord } from '../src/storage/schema';
import { startApp } from './app';
import { workerMarks } from './big-books';
import { speedRun } from './citations';

const PORT = Number(process.env.BENCH_PORT ?? 4393);

export async function citationsWorkerBench(): Promise<void> {
  const { sample, chunks, memories } = await speedRun();
  const bytes = Buffer.from(sample.document, 'utf8');
  const id = 'bench-citations';
  const run: RunRecord = {
    id,
    documentId: createHash('sha256').update(bytes).digest('hex'),
    documentName: 'planted.txt',
    question: sample.question,
    engineId: 'extractive',
    settings: { requestedChunkTokens: chunks[0]!.tokens, chunkTokens: chunks[0]!.tokens, memoryTokens: 1024, contextTokens: 8192, temperature: 0, topP: 1 },
    templates: { ...DEFAULT_TEMPLATES },
    chunks,
    status: 'done',
    nextChunk: chunks.length,
    memory: memories.at(-1)!,
    answer: sample.references.join(', '),
    createdAt: 0,
    updatedAt: 0,
  };
  const revisions: RevisionRecord[] = chunks.map((c, index) => ({
    runId: id,
    index,
    memoryTokens: 0,
    wordsAdded: 0,
    wordsRemoved: 0,
    start: c.start,
    end: c.end,
    chunkTokens: c.tokens,
    promptTokens: 0,
    completionTokens: 0,
    ms: 0,
    finishReason: 'stop',
    retries: 0,
    committedAt: index,
  }));
  const json = JSON.stringify(buildExport({ run, revisions, memories, documentSha256: run.documentId }));

  const app = await startApp(PORT);
  try {
    const page = await app.browser.newPage();
    await page.goto(`${app.url}/`);
    await page.getByLabel('Document').setInputFiles({ name: 'planted.txt', mimeType: 'text/plain', buffer: bytes });
    await page.getByText(/planted\.txt — .*tokens/).waitFor({ timeout: 120_000 });
    await page.goto(`${app.url}/#/library`);
    const t0 = Date.now();
    await page.getByLabel('Import run').setInputFiles({ name: 'run.json', mimeType: 'application/json', buffer: Buffer.from(json) });
    const sources = page.getByRole('region', { name: 'Answer' }).getByRole('region', { name: 'Sources' });
    await sources.getByRole('link').first().waitFor({ timeout: 120_000 });
    const shownMs = Date.now() - t0;
    const cited = await sources.getByRole('figure').allTextContents();
    const marks = await workerMarks(app.browser);
    const hops = sample.placements.map((p) => p.text);
    const found = hops.filter((h) => cited.some((c) => c.includes(h))).length;
    console.log(
      `Citations in the app's worker: a run of ${chunks.length.toLocaleString('en')} revisions imported beside its book (production build, Chromium)`,
    );
    console.log(
      `  read the memories ${(marks['sources-read']! - marks['sources-reading']!).toFixed(0).padStart(5)} ms   ` +
        `trace the answer, reading its sections ${(marks['sources-traced']! - marks['sources-tracing']!).toFixed(0).padStart(5)} ms (target: under 1,000 ms)   ` +
        `import to sources shown ${shownMs.toFixed(0).padStart(6)} ms; ${found} of ${hops.length} planted facts cited`,
    );
  } finally {
    await app.close();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await citationsWorkerBench();
