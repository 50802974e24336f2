/**
 * Skim mode on the evaluation generators: the share of chunks read and the
 * recall of the chunks that hold the answer's needles, against reading every
 * chunk (the baseline: 100% read, 100% recall).
 */
import { readFileSync } from 'node:fs';
import { chunkAll } from '../src/core/chunker';
import { SkimPlanner } from '../src/core/skim';
import { loadQwenTokenizer } from '../src/engines/qwen-tokenizer';
import { Haystack } from '../src/eval/haystack';
import { generateSample, type TaskId } from '../src/eval/tasks';

const TASKS: TaskId[] = ['niah_single_1', 'niah_single_2', 'niah_single_3', 'niah_multikey_1', 'niah_multikey_2', 'niah_multikey_3'];
const LENGTHS = [128 * 1024, 1024 * 1024, 3_500_000];
const SEEDS = [1, 2, 3];

export async function skimBench(): Promise<void> {
  const tokenizer = await loadQwenTokenizer();
  const book = readFileSync(new URL('../../shared/corpus/frankenstein.txt', import.meta.url), 'utf8').replace(/\r\n?/g, '\n');
  const essay = Haystack.fromText('frankenstein.txt', book);
  console.log('Skim mode (top 5% by BM25 + 1 neighbour each side), chunks of 5,000 tokens; baseline reads 100% with 100% recall');
  console.log('  task              length   chunks   read   recall   plan ms');
  const totals = { read: 0, chunks: 0, hit: 0, needles: 0 };
  for (const length of LENGTHS) {
    for (const task of TASKS) {
      let read = 0;
      let chunksTotal = 0;
      let hit = 0;
      let needles = 0;
      let planMs = 0;
      for (const seed of SEEDS) {
        const sample = generateSample(task, { seed, tokens: length, tokenizer, essay });
        const chunks = chunkAll(sample.document, tokenizer, 5000);
        const t0 = performance.now();
        const chosen = new Set(new SkimPlanner(sample.document, chunks, sample.question).select());
        planMs += performance.now() - t0;
        // The needles that carry an answer: the ones the question is about.
        const answering = sample.placements.filter((p) => sample.references.some((r) => p.text.includes(r)));
        for (const p of answering) {
          needles++;
          const at = chunks.findIndex((c) => p.start < c.end && p.end > c.start);
          if (chosen.has(at)) hit++;
        }
        read += chosen.size;
        chunksTotal += chunks.length;
      }
      totals.read += read;
      totals.chunks += chunksTotal;
      totals.hit += hit;
      totals.needles += needles;
      console.log(
        `  ${task.padEnd(16)} ${`${Math.round(length / 1024)}K`.padStart(7)} ${String(chunksTotal / SEEDS.length).padStart(8)} ${`${((100 * read) / chunksTotal).toFixed(1)}%`.padStart(6)} ${`${((100 * hit) / needles).toFixed(0)}%`.padStart(8)} ${(planMs / SEEDS.length).toFixed(0).padStart(9)}`,
      );
    }
  }
  console.log(`  all: ${((100 * totals.read) / totals.chunks).toFixed(1)}% of chunks read (target <= 20%), recall ${((100 * totals.hit) / totals.needles).toFixed(1)}% (target >= 95%)`);
}

if (import.meta.url === `file://${process.argv[1]}`) await skimBench();
