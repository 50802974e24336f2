/**
 * Heap while reading a 3.5M-token book: the memory loop over a chunk feed with
 * the extractive engine, as the worker runs it (storage aside, which lives
 * outside the JavaScript heap). Baseline: the heap with the tokenizer loaded
 * and the book's text held, before reading. Run with --expose-gc for steady
 * figures.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { ChunkFeed } from '../src/core/chunk-feed';
import { memoryLoop } from '../src/core/loop';
import { DEFAULT_TEMPLATES } from '../src/core/prompts';
import { nextTask } from '../src/core/tasks';
import { ExtractiveEngine } from '../src/engines/extractive/engine';
import { loadQwenTokenizer } from '../src/engines/qwen-tokenizer';

const gc = (globalThis as { gc?: () => void }).gc ?? (() => undefined);
const heap = () => {
  gc();
  return process.memoryUsage().heapUsed;
};

/**
 * Runs in a process of its own, so the heap holds only what a worker holds, not
 * what other benchmarks loaded before (such as the reference tokenizer).
 */
export async function memoryBench(): Promise<void> {
  const child = spawnSync(process.execPath, ['--expose-gc', '--import', 'tsx', fileURLToPath(import.meta.url)], {
    cwd: fileURLToPath(new URL('..', import.meta.url)),
    stdio: 'inherit',
  });
  if (child.status !== 0) throw new Error(`the memory benchmark failed (exit ${child.status})`);
}

async function measure(): Promise<void> {
  const before = heap();
  const tokenizer = await loadQwenTokenizer();
  const tokenizerBytes = heap() - before;
  const book = readFileSync(new URL('../../shared/corpus/frankenstein.txt', import.meta.url), 'utf8').replace(/\r\n?/g, '\n');
  // Repeated copies share nothing once joined: a flat string, as a decoded file is.
  const text = (book.repeat(34) + ' ').slice(0, -1);
  const textBytes = text.length * 2; // UTF-16: the book has curly quotes, so V8 stores it two bytes a character
  const base = heap();
  let peak = base;
  const feed = new ChunkFeed({ text, tokenizer, maxTokens: 5000, spans: [] });
  const loop = memoryLoop({
    text,
    chunks: feed,
    question: 'Where did Victor first see the creature after it left the laboratory?',
    generator: new ExtractiveEngine(tokenizer),
    templates: DEFAULT_TEMPLATES,
    memoryTokens: 1024,
    sampling: { temperature: 0.7, topP: 0.95 },
  });
  let steps = 0;
  const t0 = performance.now();
  for await (const event of loop) {
    if (event.kind === 'revision' && ++steps % 25 === 0) peak = Math.max(peak, heap());
  }
  peak = Math.max(peak, heap());
  const readMs = performance.now() - t0;
  // The engine's turn of the event loop before each step (so that Ctrl-C is heard), timed alone against the mean step it precedes.
  const turns = 10_000;
  const y0 = performance.now();
  for (let i = 0; i < turns; i++) await nextTask();
  const turnMs = (performance.now() - y0) / turns;
  const mb = (n: number) => `${(n / 1024 / 1024).toFixed(0)} MB`;
  console.log(
    `Heap while reading ${feed.spans.length} chunks (${(text.length / 1e6).toFixed(1)}M characters, ${mb(textBytes)} of text) in ${(readMs / 1000).toFixed(1)} s`,
  );
  console.log(`  baseline  tokenizer loaded and text held  ${mb(base)}  (tokenizer ${mb(tokenizerBytes)})`);
  console.log(
    `  reading   peak heap above the baseline    ${mb(peak - base)}  (${((peak - base) / textBytes).toFixed(2)}x the text; whole heap ${(peak / textBytes).toFixed(2)}x; target < 3x)`,
  );
  console.log(
    `  yielding  a turn of the event loop a step     ${(turnMs * 1000).toFixed(1)} µs  (${((100 * turnMs * steps) / readMs).toFixed(3)}% of the mean step, ${(readMs / steps).toFixed(1)} ms)`,
  );
}

if (import.meta.url === `file://${process.argv[1]}`) await measure();
