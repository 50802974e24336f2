/**
 * Sampling one row of logits in JavaScript, as the batched writer and
 * speculative writing do for every token: the app's sampling distribution at
 * the paper's settings (temperature 0.7, top-p 0.95) and at top-p 1, on rows
 * of Qwen's vocabulary shaped like a model's (a peaked head over a noisy
 * tail). Baselines in the same run: the distribution computed by sorting the
 * whole vocabulary (what the app did before), and argmax (greedy). Each
 * row's result is checked against the baseline's, id for id and bit for bit.
 * Each figure is the fastest of five rounds, with the load average printed.
 *
 * `npm run bench -- sampling [--out FILE]` also writes the figures as JSON.
 */
import { writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { seededRandom } from '../src/core/random';
import { argmax, type Distribution, type Sampling, samplingDistribution } from '../src/core/speculative';
import { peakedLogits, QWEN_VOCAB, sortingDistribution } from '../test/support/sorting-sampler';

/** A confident position: 32 likely tokens falling by 0.25 from 20, over Gaussian noise of deviation 2.5. */
const SHAPE = { vocab: QWEN_VOCAB, head: 32, top: 20, step: 0.25, spread: 2.5 };
const ROWS = 16;
const ROUNDS = 5;
const SETTINGS: Sampling[] = [
  { temperature: 0.7, topP: 0.95 },
  { temperature: 0.7, topP: 1 },
];

/**
 * Milliseconds a row: the fastest of ROUNDS rounds of `count` rows taken in
 * turn (after a warm-up), as other work on the machine only slows a round.
 */
function perRow(rows: readonly Float32Array[], count: number, work: (row: Float32Array) => unknown): number {
  for (let i = 0; i < 4; i++) work(rows[i % rows.length]!);
  let fastest = Infinity;
  for (let round = 0; round < ROUNDS; round++) {
    const t0 = performance.now();
    for (let i = 0; i < count; i++) work(rows[i % rows.length]!);
    fastest = Math.min(fastest, (performance.now() - t0) / count);
  }
  return fastest;
}

function same(a: Distribution, b: Distribution): boolean {
  if (a.ids.length !== b.ids.length) return false;
  for (let i = 0; i < a.ids.length; i++) if (a.ids[i] !== b.ids[i] || !Object.is(a.probs[i], b.probs[i])) return false;
  return true;
}

/** The value of `--out FILE` on the command line, if given. */
function outFile(): string | undefined {
  const at = process.argv.indexOf('--out');
  return at < 0 ? undefined : process.argv[at + 1];
}

export async function samplingBench(): Promise<void> {
  const random = seededRandom(7);
  const rows = Array.from({ length: ROWS }, () => peakedLogits(random, SHAPE));
  const load = loadavg();
  console.log(
    `Sampling one row of logits: Qwen's ${QWEN_VOCAB.toLocaleString('en')} tokens, ${SHAPE.head} likely ones over Gaussian noise (load average ${load.map((l) => l.toFixed(2)).join(', ')})`,
  );
  const argmaxMs = perRow(rows, 200, (row) => argmax(row));
  const line = (who: string, what: string, ms: number, after = '') =>
    console.log(`  ${who.padEnd(9)} ${what.padEnd(58)} ${ms.toFixed(3).padStart(8)} ms a row${after}`);
  line('baseline', 'argmax (greedy)', argmaxMs);
  const measured = [];
  for (const sampling of SETTINGS) {
    for (const row of rows) {
      if (!same(samplingDistribution(row, sampling), sortingDistribution(row, sampling))) {
        throw new Error(`The sampler and the sorting baseline differ at temperature ${sampling.temperature}, top-p ${sampling.topP}.`);
      }
    }
    const nucleus = rows.reduce((n, row) => n + samplingDistribution(row, sampling).ids.length, 0) / rows.length;
    const baselineMs = perRow(rows, 8, (row) => sortingDistribution(row, sampling));
    const ms = perRow(rows, 100, (row) => samplingDistribution(row, sampling));
    const label = `temperature ${sampling.temperature}, top-p ${sampling.topP}`;
    line('baseline', `sorting the vocabulary, ${label}`, baselineMs);
    const kept = `${Math.round(nucleus).toLocaleString('en')} tokens kept`;
    line(
      'sampler',
      `the app's, ${label}`,
      ms,
      `  (${(baselineMs / ms).toFixed(1)}x faster than sorting, ${(ms / argmaxMs).toFixed(1)}x argmax's time; ${kept})`,
    );
    measured.push({ temperature: sampling.temperature, topP: sampling.topP, msPerRow: ms, baselineMsPerRow: baselineMs, tokensKept: nucleus });
  }
  const out = outFile();
  if (out) {
    writeFileSync(
      out,
      `${JSON.stringify({ vocab: QWEN_VOCAB, rows: measured, argmaxMsPerRow: argmaxMs, shape: SHAPE, rounds: ROUNDS, loadAverage: load }, null, 2)}\n`,
    );
    console.log(`  written to ${out}`);
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await samplingBench();
