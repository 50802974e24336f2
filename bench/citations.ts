/**
 * Citations on the evaluation generators: does the tracer cite the chunks
 * that hold the planted facts (the needle asked for, every fact of a chain),
 * and only those? Each sample is read by the memory loop with the extractive
 * engine (for chains, plus every planted sentence read so far, as a model that
 * follows the chain keeps it: bench/skim.ts's ChainReader); its answer is the
 * reference answer, as a model that got it right would write it. The same
 * memories are traced as they are and rewritten the way a model rewrites its
 * notes (bench/paraphrase.ts). Beside the tracer, in the same run, the
 * baseline a person has without it: search the memories for the answer
 * string (each part of it) and take the section of the first revision that
 * holds it.
 *
 * `npm run bench` runs it with the others (and the speed of tracing a run of
 * 2,000 revisions, citationsSpeedBench); alone: `npm run bench -- citations`.
 */
import { readFileSync } from 'node:fs';
import { chunkAll } from '../src/core/chunker';
import type { TextGenerator } from '../src/core/generation';
import { memoryLoop } from '../src/core/loop';
import { DEFAULT_READ_SETTINGS } from '../src/core/plan';
import { DEFAULT_TEMPLATES } from '../src/core/prompts';
import { Tracer } from '../src/core/citations/trace';
import { ExtractiveEngine } from '../src/engines/extractive/engine';
import { loadQwenTokenizer, type QwenTokenizer } from '../src/engines/qwen-tokenizer';
import { Haystack } from '../src/eval/haystack';
import { generateSample, type TaskId, type TaskSample } from '../src/eval/tasks';
import { groupDigits, paraphraseMemory } from './paraphrase';
import { ChainReader } from './skim';

const NEEDLES: TaskId[] = ['niah_single_2', 'niah_multikey_1', 'niah_multikey_2', 'niah_multiquery'];
const CHAINS: TaskId[] = ['chain_2', 'chain_3', 'chain_3_reversed'];
const LENGTHS = [128 * 1024, 1024 * 1024];
const SEEDS: Record<number, number[]> = { [128 * 1024]: [1, 2, 3, 4, 5, 6], [1024 * 1024]: [1, 2] };
const CHUNK_TOKENS = DEFAULT_READ_SETTINGS.chunkTokens;
const MEMORY_TOKENS = DEFAULT_READ_SETTINGS.memoryTokens;

type Memories = 'verbatim' | 'paraphrased';
type Method = 'tracer' | 'baseline';

/** Hits, planted and cited chunks, summed over samples. */
interface Tally {
  hits: number;
  planted: number;
  cited: number;
}
const empty = (): Tally => ({ hits: 0, planted: 0, cited: 0 });

function add(t: Tally, planted: ReadonlySet<number>, cited: ReadonlySet<number>): void {
  t.planted += planted.size;
  t.cited += cited.size;
  t.hits += [...cited].filter((c) => planted.has(c)).length;
}

const pct = (a: number, b: number) => (b ? `${((100 * a) / b).toFixed(1)}%` : '–');
const recallOf = (t: Tally) => pct(t.hits, t.planted);
const precisionOf = (t: Tally) => pct(t.hits, t.cited);

/** The planted sentences the answer rests on: the needles asked for, or every fact of a chain. */
function plantedFacts(sample: TaskSample): TaskSample['placements'] {
  return NEEDLES.includes(sample.task) ? sample.placements.filter((p) => sample.references.some((r) => p.text.includes(r))) : sample.placements;
}

/** The memory after every revision of a read of `sample`. */
export async function readMemories(sample: TaskSample, tokenizer: QwenTokenizer, chunks: ReturnType<typeof chunkAll>): Promise<string[]> {
  const engine = new ExtractiveEngine(tokenizer);
  const generator: TextGenerator = CHAINS.includes(sample.task)
    ? new ChainReader(
        engine,
        sample.placements.map((p) => p.text),
      )
    : engine;
  const memories: string[] = [];
  const loop = memoryLoop({
    text: sample.document,
    chunks,
    question: sample.question,
    generator,
    templates: DEFAULT_TEMPLATES,
    memoryTokens: MEMORY_TOKENS,
    sampling: { temperature: 0, topP: 1 },
  });
  for await (const event of loop) if (event.kind === 'revision') memories[event.index] = event.memory;
  return memories;
}

/** The baseline: for each part of the answer, the first revision whose memory holds it, as the inspector's search finds it. */
function searchMemories(memories: readonly string[], parts: readonly string[]): Set<number> {
  const out = new Set<number>();
  for (const part of parts) {
    const want = part.toLocaleLowerCase();
    const first = memories.findIndex((m) => m.toLocaleLowerCase().includes(want));
    if (first >= 0) out.add(first);
  }
  return out;
}

export async function citationsBench(lengths = LENGTHS, tasks = [...NEEDLES, ...CHAINS]): Promise<void> {
  const tokenizer = await loadQwenTokenizer();
  const book = readFileSync(new URL('../data/haystack/frankenstein.txt', import.meta.url), 'utf8').replace(/\r\n?/g, '\n');
  const essay = Haystack.fromText('frankenstein.txt', book);
  console.log(
    `Citations: recall / precision of the chunks holding the planted facts, extractive engine's memories (chunks ${CHUNK_TOKENS.toLocaleString('en')} tokens, memory ${MEMORY_TOKENS.toLocaleString('en')}); ` +
      'baseline: search the memories for the answer string',
  );
  console.log(
    `  task               length  samples  held   ${['verbatim tracer', 'verbatim baseline', 'paraphrased tracer', 'paraphrased baseline'].map((h) => h.padStart(21)).join('')}  trace ms`,
  );
  const totals = new Map<string, Tally>();
  const total = (name: string) => {
    let t = totals.get(name);
    if (!t) totals.set(name, (t = empty()));
    return t;
  };
  for (const length of lengths) {
    for (const task of tasks) {
      const seeds = SEEDS[length] ?? [1, 2];
      const cell: Record<string, Tally> = {};
      let traceMs = 0;
      let traces = 0;
      // Planted facts the final memory holds, as the book has them: what any tracer can cite.
      const facts = { held: 0, all: 0 };
      for (const seed of seeds) {
        const sample = generateSample(task, { seed, tokens: length, tokenizer, essay });
        const chunks = chunkAll(sample.document, tokenizer, CHUNK_TOKENS);
        const planted = new Set(plantedFacts(sample).map((p) => chunks.findIndex((c) => p.start < c.end && p.end > c.start)));
        const verbatim = await readMemories(sample, tokenizer, chunks);
        const last = verbatim.at(-1) ?? '';
        facts.all += plantedFacts(sample).length;
        facts.held += plantedFacts(sample).filter((p) => last.replace(/\s+/g, ' ').includes(p.text)).length;
        const answer = sample.references.join(', ');
        for (const memories of ['verbatim', 'paraphrased'] as Memories[]) {
          const texts = memories === 'verbatim' ? verbatim : verbatim.map((m, r) => paraphraseMemory(m, r));
          // The model that rewrote its notes writes its answer its way too.
          const said = memories === 'verbatim' ? answer : groupDigits(answer);
          const t0 = performance.now();
          const sources = await new Tracer({
            question: sample.question,
            memories: texts,
            section: (r) => chunks[r] && { text: sample.document.slice(chunks[r].start, chunks[r].end), start: chunks[r].start },
          }).citeAnswer(said);
          traceMs += performance.now() - t0;
          traces++;
          const byMethod: Record<Method, Set<number>> = {
            tracer: new Set(sources.citations.map((c) => c.revision)),
            baseline: searchMemories(texts, said.split(', ')),
          };
          for (const method of ['tracer', 'baseline'] as Method[]) {
            const key = `${memories} ${method}`;
            const kind = NEEDLES.includes(task) ? 'needles' : 'chains';
            for (const name of [key, `${key} ${kind}`, `${key} ${Math.round(length / 1024)}K`]) add(total(name), planted, byMethod[method]);
            add((cell[key] ??= empty()), planted, byMethod[method]);
          }
        }
      }
      const columns = ['verbatim tracer', 'verbatim baseline', 'paraphrased tracer', 'paraphrased baseline'].map((k) =>
        `${recallOf(cell[k]!)} / ${precisionOf(cell[k]!)}`.padStart(21),
      );
      console.log(
        `  ${task.padEnd(17)} ${`${Math.round(length / 1024)}K`.padStart(6)} ${String(seeds.length).padStart(8)}  ${pct(facts.held, facts.all).padStart(6)}${columns.join('')} ${(traceMs / traces).toFixed(0).padStart(9)}`,
      );
    }
  }
  console.log('  Totals (recall / precision):');
  for (const scope of ['', ' needles', ' chains', ...lengths.map((l) => ` ${Math.round(l / 1024)}K`)]) {
    const row = ['verbatim tracer', 'verbatim baseline', 'paraphrased tracer', 'paraphrased baseline'].map((k) => {
      const t = totals.get(`${k}${scope}`)!;
      return `${recallOf(t)} / ${precisionOf(t)}`.padStart(21);
    });
    console.log(`    ${(scope.trim() || 'all').padEnd(33)}${row.join('')}`);
  }
}

/** Revisions of the run the speed is measured on. */
const SPEED_REVISIONS = 2000;

/** A read of about 2,000 revisions: a chain planted in a 1M-token book, in chunks of about 500 tokens, with its memories. */
export async function speedRun(): Promise<{ sample: TaskSample; chunks: ReturnType<typeof chunkAll>; memories: string[] }> {
  const tokenizer = await loadQwenTokenizer();
  const book = readFileSync(new URL('../data/haystack/frankenstein.txt', import.meta.url), 'utf8').replace(/\r\n?/g, '\n');
  const essay = Haystack.fromText('frankenstein.txt', book);
  const sample = generateSample('chain_3', { seed: 7, tokens: 1024 * 1024, tokenizer, essay });
  const chunks = chunkAll(sample.document, tokenizer, Math.floor(sample.tokens / SPEED_REVISIONS) + 1);
  return { sample, chunks, memories: await readMemories(sample, tokenizer, chunks) };
}

/**
 * How long tracing takes on a run of 2,000 revisions (a 1M-token book in
 * chunks of about 500 tokens, memories of up to 1,024): an answer, and every
 * note of the last memory (the inspector's memory pane), from a fresh tracer,
 * against the baseline's search through the same memories, in the same run.
 */
export async function citationsSpeedBench(): Promise<void> {
  const { sample, chunks, memories: verbatim } = await speedRun();
  const chars = verbatim.reduce((n, m) => n + m.length, 0);
  console.log(
    `Citations: tracing a run of ${verbatim.length.toLocaleString('en')} revisions (${(chars / 1e6).toFixed(1)}M characters of memories), node; ` +
      'baseline: searching the memories for the answer',
  );
  for (const memories of ['verbatim', 'paraphrased'] as Memories[]) {
    const texts = memories === 'verbatim' ? verbatim : verbatim.map((m, r) => paraphraseMemory(m, r));
    const answer = sample.references.join(', ');
    const section = (r: number) => chunks[r] && { text: sample.document.slice(chunks[r].start, chunks[r].end), start: chunks[r].start };
    const best = async (work: () => unknown) => {
      let ms = Infinity;
      for (let i = 0; i < 3; i++) {
        const t0 = performance.now();
        await work();
        ms = Math.min(ms, performance.now() - t0);
      }
      return ms;
    };
    const search = await best(() => searchMemories(texts, [answer]));
    const cite = await best(() => new Tracer({ question: sample.question, memories: texts, section }).citeAnswer(answer));
    const pane = await best(() => new Tracer({ question: sample.question, memories: texts, section }).traceMemory(texts.length - 1));
    console.log(
      `  ${memories.padEnd(12)} search ${search.toFixed(0).padStart(5)} ms   answer traced ${cite.toFixed(0).padStart(5)} ms (${(cite / search).toFixed(1)}x)   ` +
        `every note of the last memory ${pane.toFixed(0).padStart(5)} ms (${(pane / search).toFixed(1)}x); target: under 1,000 ms`,
    );
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await citationsBench();
  console.log();
  await citationsSpeedBench();
}
