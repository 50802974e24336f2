/**
 * Skim mode on the evaluation generators: the share of chunks read and the
 * recall of the chunks that hold what the answer needs (the needle, or every
 * fact of a chain), against reading every chunk (100% read, 100% recall).
 *
 * A skim that follows the memory needs memories. Each one here is what the
 * extractive engine keeps of a chunk (the sentences sharing most words with
 * the question, up to 1,024 tokens: real book sentences, with their names)
 * plus every planted sentence read so far, as a model that notices the chain
 * would keep it. The same memories drive the earlier follow (the baseline,
 * bench/skim-old-follow.ts), the new one, and the new one with look-back.
 */
import { readFileSync } from 'node:fs';
import { chunkAll, type ChunkSpan } from '../src/core/chunker';
import type { ChatMessage, GenerateOptions, GenerateResult, TextGenerator } from '../src/core/generation';
import { memoryLoop } from '../src/core/loop';
import { DEFAULT_TEMPLATES } from '../src/core/prompts';
import type { PlannedChunk } from '../src/core/read-reason';
import { DEFAULT_SKIM, SkimIndex, SkimPlanner } from '../src/core/skim';
import { SkimFollower } from '../src/core/skim-follow';
import { ExtractiveEngine, parsePrompt } from '../src/engines/extractive/engine';
import { loadQwenTokenizer, type QwenTokenizer } from '../src/engines/qwen-tokenizer';
import { Haystack } from '../src/eval/haystack';
import { generateSample, type TaskId, type TaskSample } from '../src/eval/tasks';
import { OldSkimFollower } from './skim-old-follow';

const NEEDLES: TaskId[] = ['niah_single_1', 'niah_single_2', 'niah_single_3', 'niah_multikey_1', 'niah_multikey_2', 'niah_multikey_3'];
const CHAINS: TaskId[] = ['chain_2', 'chain_3', 'chain_2_reversed', 'chain_3_reversed', 'vt'];
const LENGTHS = [128 * 1024, 1024 * 1024, 3_500_000];
const SEEDS: Record<'needle' | 'chain', number[]> = { needle: [1, 2, 3], chain: [1, 2, 3, 4, 5, 6] };
const CHUNK_TOKENS = 5000;
const MEMORY_TOKENS = 1024;

type Variant = 'rank' | 'old' | 'new' | 'back';
const VARIANTS: Variant[] = ['rank', 'old', 'new', 'back'];
const HEADS: Record<Variant, string> = { rank: 'rank only', old: 'old follow', new: 'new follow', back: 'new + look-back' };

/** Keeps what the extractive engine keeps, plus every planted sentence it has read. */
export class ChainReader implements TextGenerator {
  constructor(
    private readonly engine: ExtractiveEngine,
    private readonly planted: readonly string[],
  ) {}

  async generate(messages: readonly ChatMessage[], options: GenerateOptions): Promise<GenerateResult> {
    const result = await this.engine.generate(messages, options);
    const { memory = '', section } = parsePrompt(messages[messages.length - 1]!.content);
    if (section === undefined) return result;
    const kept = this.planted.filter((p) => section.includes(p) || memory.includes(p));
    const rest = result.text.split('\n').filter((line) => !kept.includes(line));
    return { ...result, text: [...kept, ...rest].join('\n') };
  }
}

/** The chunks one variant reads: the plan, grown by its follower while the memory loop reads it. */
async function readChunks(
  variant: Variant,
  sample: TaskSample,
  index: SkimIndex,
  planned: readonly PlannedChunk[],
  tokenizer: QwenTokenizer,
): Promise<readonly ChunkSpan[]> {
  if (variant === 'rank') return planned;
  const plan = [...planned];
  const follower =
    variant === 'old'
      ? new OldSkimFollower(index, sample.question, plan, DEFAULT_SKIM)
      : new SkimFollower(index, plan, { ...DEFAULT_SKIM, question: sample.question, memory: '', lookBack: variant === 'back' });
  const loop = memoryLoop({
    text: sample.document,
    chunks: plan,
    question: sample.question,
    generator: new ChainReader(
      new ExtractiveEngine(tokenizer),
      sample.placements.map((p) => p.text),
    ),
    templates: DEFAULT_TEMPLATES,
    memoryTokens: MEMORY_TOKENS,
    sampling: { temperature: 0, topP: 1 },
  });
  for await (const event of loop) if (event.kind === 'revision') follower.follow(event.memory, event.index);
  return plan;
}

/** The planted sentences the answer needs, in the order they are followed. */
function hopsOf(sample: TaskSample): TaskSample['placements'] {
  if (NEEDLES.includes(sample.task)) return sample.placements.filter((p) => sample.references.some((r) => p.text.includes(r)));
  return sample.task.endsWith('_reversed') ? [...sample.placements].reverse() : sample.placements;
}

interface Tally {
  read: number;
  chunks: number;
  /** Per hop: [read, planted]. */
  hops: [number, number][];
}

const empty = (): Tally => ({ read: 0, chunks: 0, hops: [] });

function add(t: Tally, read: number, chunks: number, hit: boolean[]): void {
  t.read += read;
  t.chunks += chunks;
  hit.forEach((h, k) => {
    t.hops[k] ??= [0, 0];
    t.hops[k]![0] += h ? 1 : 0;
    t.hops[k]![1]++;
  });
}

const pct = (a: number, b: number) => (b ? `${((100 * a) / b).toFixed(1)}%` : '–');
const recall = (t: Tally) =>
  pct(
    t.hops.reduce((n, h) => n + h[0], 0),
    t.hops.reduce((n, h) => n + h[1], 0),
  );
const perHop = (t: Tally) => t.hops.map((h, k) => `hop ${k + 1} ${pct(h[0], h[1])}`).join(', ');

export async function skimBench(lengths = LENGTHS, tasks = [...NEEDLES, ...CHAINS]): Promise<void> {
  const tokenizer = await loadQwenTokenizer();
  const book = readFileSync(new URL('../../shared/corpus/frankenstein.txt', import.meta.url), 'utf8').replace(/\r\n?/g, '\n');
  const essay = Haystack.fromText('frankenstein.txt', book);
  console.log(
    `Skim mode (top ${DEFAULT_SKIM.keep * 100}% by BM25 + ${DEFAULT_SKIM.neighbours} neighbour each side), chunks of ${CHUNK_TOKENS.toLocaleString('en')} tokens, ` +
      `memories of up to ${MEMORY_TOKENS} tokens; baseline reads 100% with 100% recall`,
  );
  console.log(
    `  each cell: share of chunks read / recall of the chunks holding every needle or fact; needles over ${SEEDS.needle.length} seeds, chains over ${SEEDS.chain.length}`,
  );
  console.log(`  task               length  chunks ${VARIANTS.map((v) => HEADS[v].padStart(17)).join('')}   plan ms`);
  const groups = new Map<string, Record<Variant, Tally>>();
  const group = (name: string) => {
    let g = groups.get(name);
    if (!g) groups.set(name, (g = { rank: empty(), old: empty(), new: empty(), back: empty() }));
    return g;
  };
  for (const length of lengths) {
    for (const task of tasks) {
      const needle = NEEDLES.includes(task);
      const seeds = SEEDS[needle ? 'needle' : 'chain'];
      const cell: Record<Variant, Tally> = { rank: empty(), old: empty(), new: empty(), back: empty() };
      let planMs = 0;
      let chunkCount = 0;
      for (const seed of seeds) {
        const sample = generateSample(task, { seed, tokens: length, tokenizer, essay });
        const chunks = chunkAll(sample.document, tokenizer, CHUNK_TOKENS);
        chunkCount += chunks.length;
        const t0 = performance.now();
        const index = new SkimIndex(sample.document, chunks);
        const planned = new SkimPlanner(index, sample.question).plan().map(({ index: i, reason }) => ({ ...chunks[i]!, reason }));
        planMs += performance.now() - t0;
        const hops = hopsOf(sample).map((p) => chunks.findIndex((c) => p.start < c.end && p.end > c.start));
        // Look-back is measured on the chains; the needle tasks are about following forward.
        for (const variant of VARIANTS.filter((v) => !(needle && v === 'back'))) {
          const read = new Set((await readChunks(variant, sample, index, planned, tokenizer)).map((c) => c.start));
          const hit = hops.map((i) => read.has(chunks[i]!.start));
          add(cell[variant], read.size, chunks.length, hit);
          const name = needle ? 'needle tasks' : task === 'vt' ? 'vt' : task.endsWith('_reversed') ? 'reversed chains' : 'forward chains';
          add(group(name)[variant], read.size, chunks.length, hit);
          add(group(`${name} at ${Math.round(length / 1024)}K`)[variant], read.size, chunks.length, hit);
        }
      }
      const cells = VARIANTS.map((v) => (cell[v].chunks ? `${pct(cell[v].read, cell[v].chunks)} / ${recall(cell[v])}` : '–').padStart(17)).join('');
      console.log(
        `  ${task.padEnd(17)} ${`${Math.round(length / 1024)}K`.padStart(6)} ${String(Math.round(chunkCount / seeds.length)).padStart(7)} ${cells} ${(planMs / seeds.length).toFixed(0).padStart(9)}`,
      );
    }
  }
  console.log('  By kind (share read / recall of every hop, per hop), targets: chains >= 95% of every hop at <= 20% read; needles >= 95% at <= 20%:');
  for (const [name, g] of groups) {
    if (name.includes(' at ')) continue;
    for (const v of VARIANTS.filter((v) => g[v].chunks > 0)) {
      console.log(
        `    ${name.padEnd(16)} ${HEADS[v].padEnd(16)} read ${pct(g[v].read, g[v].chunks).padStart(6)}, recall ${recall(g[v]).padStart(6)} (${perHop(g[v])})`,
      );
    }
    const byLength = lengths.map((l) => {
      const at = groups.get(`${name} at ${Math.round(l / 1024)}K`)!.new;
      return `${Math.round(l / 1024)}K ${pct(at.read, at.chunks)} / ${recall(at)}`;
    });
    console.log(`    ${''.padEnd(16)} new follow by length: ${byLength.join(', ')}`);
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await skimBench();
