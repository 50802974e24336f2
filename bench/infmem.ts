/**
 * InfMem beside MemAgent on the evaluation's generated tasks at 128K and 1M
 * tokens, with the extractive engine: MemAgent's loop with the engine's
 * memory rule, and InfMem's loop with the engine's stand-ins for its planner
 * and writer (src/engines/extractive/infmem-steps.ts), on the same samples.
 * The baseline is MemAgent, read in the same run: InfMem's share of the
 * chunks read and its accuracy are set beside it. The stand-in planner is
 * not InfMem's trained planner: these figures say what the loop does with
 * fixed rules, not what the paper's model does.
 *
 * `npm run bench -- infmem [--out FILE]` (FILE gets the figures as JSON).
 */
import { writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { ExtractiveEngine } from '../src/engines/extractive/engine';
import { extractiveInfmemSteps } from '../src/engines/extractive/infmem-steps';
import { loadQwenTokenizer } from '../src/engines/qwen-tokenizer';
import { loadHaystack } from '../src/cli/eval';
import { compareMethods, type ComparisonRow, sampleRun } from '../src/eval/compare';
import { DEFAULT_EARLY_STOP } from '../src/core/infmem/planner-state';
import { runInfmemSample } from '../src/eval/infmem-sample';
import { formatLength } from '../src/eval/lengths';
import { alignTable } from '../src/eval/report';
import { planSweep, runSample, type SampleResult, sweepSpec } from '../src/eval/sweep';
import type { TaskId } from '../src/eval/tasks';

const TASKS: TaskId[] = ['niah_single_1', 'niah_multikey_1', 'niah_multiquery', 'vt', 'chain_2'];
const LENGTHS = [128 * 1024, 1024 * 1024];
/** Samples per task: two at 128K, one at 1M (a 1M sample is about 200 chunks a method). */
const SAMPLES: Record<number, number> = { [128 * 1024]: 2, [1024 * 1024]: 1 };

/** The value of `--out FILE` on the command line, if given. */
function outFile(): string | undefined {
  const at = process.argv.indexOf('--out');
  return at < 0 ? undefined : process.argv[at + 1];
}

export async function infmemBench(): Promise<void> {
  const tokenizer = await loadQwenTokenizer();
  const engine = new ExtractiveEngine(tokenizer);
  const essay = await loadHaystack(undefined);
  const load = loadavg();
  console.log(
    `InfMem beside MemAgent: extractive engine (InfMem's planner and writer are its fixed-rule stand-ins), early stop ${DEFAULT_EARLY_STOP}, ` +
      `tasks ${TASKS.join(', ')}; the same samples by each method (load average ${load.map((l) => l.toFixed(2)).join(', ')})`,
  );
  const results: SampleResult[] = [];
  for (const length of LENGTHS) {
    const spec = sweepSpec({ tasks: TASKS, lengths: [length], samples: SAMPLES[length]!, seed: 0 });
    const ctx = { generator: engine, tokenizer, contextWindow: engine.contextWindow, essay };
    for (const planned of planSweep(spec)) {
      const memagent = await runSample(spec, planned, ctx);
      const infmem = await runInfmemSample(planned, {
        ...ctx,
        codec: tokenizer,
        stepsFor: (document) => extractiveInfmemSteps(document, tokenizer),
        earlyStop: DEFAULT_EARLY_STOP,
      });
      results.push(memagent, infmem);
      const score = (r: SampleResult) => (r.scores ? r.scores.score.toFixed(2) : '—');
      console.log(
        `  ${planned.task} ${formatLength(length)} #${planned.index + 1}: MemAgent ${score(memagent)} (${memagent.chunks} chunks), ` +
          `InfMem ${score(infmem)} (${infmem.chunksRead}/${infmem.chunks} chunks read)`,
      );
    }
  }
  const rows = compareMethods(results.map(sampleRun), LENGTHS.map(formatLength));
  console.log(table(rows));
  const out = outFile();
  if (out) {
    const samples = results.map((r) => ({
      method: r.method,
      task: r.task,
      length: r.length,
      index: r.index,
      score: r.scores?.score ?? null,
      chunks: r.chunks,
      chunksRead: r.chunksRead,
      requests: r.requests,
    }));
    writeFileSync(out, `${JSON.stringify({ date: new Date().toISOString(), earlyStop: DEFAULT_EARLY_STOP, tasks: TASKS, rows, samples }, null, 2)}\n`);
    console.log(`  written to ${out}`);
  }
}

function table(rows: readonly ComparisonRow[]): string {
  const lines: string[][] = [['length', 'method', 'samples', 'accuracy %', 'chunks read', 'share read', 'requests', 'time s']];
  for (const r of rows) {
    lines.push([
      r.group,
      r.method === 'memagent' ? 'MemAgent (baseline)' : 'InfMem',
      `${r.scored}/${r.items}`,
      r.accuracy === null ? '—' : (r.accuracy * 100).toFixed(1),
      `${r.chunksRead.toLocaleString('en')}/${r.chunks.toLocaleString('en')}`,
      r.chunks ? `${((100 * r.chunksRead) / r.chunks).toFixed(1)}%` : '—',
      r.requests.toLocaleString('en'),
      (r.ms / 1000).toFixed(1),
    ]);
  }
  return alignTable(lines)
    .split('\n')
    .map((l) => `  ${l}`)
    .join('\n');
}
