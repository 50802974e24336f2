/**
 * `memagent eval` (also `npm run eval --`): the Evaluate page's harness from
 * the command line, the same generators, loop and scorers with files instead
 * of IndexedDB; with --data, RULER-HotpotQA files read by the paper's method
 * (eval-data.ts).
 */
import { closeSync, existsSync, writeSync } from 'node:fs';
import { basename, dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TextGenerator } from '../core/generation';
import type { Engine } from '../engines/engine';
import { EXTRACTIVE_INFO } from '../engines/extractive/info';
import { Haystack } from '../eval/haystack';
import { formatLength, parseLengths } from '../eval/lengths';
import { cellsCsv, type EvaluationReport, formatTables, reportJson } from '../eval/report';
import { planSweep, type ReadingMode, runSample, type SampleResult, summarize, sweepSpec, type SweepSpec, sweepStepTokens } from '../eval/sweep';
import { isTaskId, TASK_IDS, type TaskId } from '../eval/tasks';
import { ingestBytes } from '../ingest/ingest';
import { parseFlags, settingsFlags, UsageError, wholeNumber } from './flags';
import { choosePrompts, describeEngine, describePrompts, engineConfigOf, engineIdOf, openEngine, seconds, withDefaultEngine } from './engine';
import { checkDatasetFiles, DatasetArgsError, planDatasetEval, runDatasetEval } from './eval-data';
import { runReaders, sampleSteps } from './eval-groups';
import { stopsEverySample } from '../engines/sample-groups';
import { openOutput } from './journal';
import { Progress, progressMode } from './progress';
import type { ResolvedPrompts } from './prompts';
import { readFileBytes } from './read-set';
import { whole } from './numbers';

/**
 * The book that fills the "essay" tasks unless --haystack names another: a
 * public-domain text the project carries (Mary Shelley's Frankenstein, Project
 * Gutenberg's header and footer cut), found beside this file wherever it is installed.
 */
export const DEFAULT_HAYSTACK = resolve(dirname(fileURLToPath(import.meta.url)), '../../data/haystack/frankenstein.txt');

/** eval's own flags; the server, prompt and settings flags are common (flags.ts). */
const EVAL_OPTIONS = {
  concurrency: { type: 'string' },
  data: { type: 'string', multiple: true },
  method: { type: 'string' },
  tasks: { type: 'string' },
  lengths: { type: 'string', default: '8k' },
  samples: { type: 'string' },
  seed: { type: 'string' },
  mode: { type: 'string', default: 'memory' },
  haystack: { type: 'string' },
  json: { type: 'string' },
  csv: { type: 'string' },
} as const;

type EvalFlags = ReturnType<typeof parseFlags<typeof EVAL_OPTIONS>>['values'];

/** A book read as the app reads it (any format it takes, Gutenberg's header and footer cut); a missing file is a usage error. */
export async function loadHaystack(file: string | undefined, fallback = DEFAULT_HAYSTACK): Promise<Haystack> {
  const path = file ?? fallback;
  if (!existsSync(path)) {
    throw new UsageError(
      file
        ? `There is no haystack file ${file}.`
        : `The haystack book this program carries is missing (${path}): reinstall memagent-web, or give a book with --haystack FILE.`,
    );
  }
  const { text } = await ingestBytes(basename(path), readFileBytes(path));
  return Haystack.fromText(basename(path), text);
}

/** The generated tasks' flags, checked before any engine is opened. */
function sweepOf(v: EvalFlags) {
  if (v.method !== undefined) throw new UsageError("--method goes with --data: the paper's method reads RULER-HotpotQA files.");
  const tasks = v.tasks
    ? [
        ...new Set(
          v.tasks
            .split(',')
            .map((t) => t.trim())
            .filter(Boolean),
        ),
      ]
    : [...TASK_IDS];
  const unknown = tasks.filter((t) => !isTaskId(t));
  if (unknown.length) throw new UsageError(`Unknown task ${unknown.join(', ')}. Tasks: ${TASK_IDS.join(', ')}.`);
  if (v.mode !== 'memory' && v.mode !== 'full') throw new UsageError(`--mode is memory or full, got "${v.mode}".`);
  let lengths: number[];
  try {
    lengths = parseLengths(v.lengths);
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
  return sweepSpec({
    tasks: tasks as TaskId[],
    lengths,
    samples: wholeNumber('samples', v.samples, 1) ?? 5,
    seed: wholeNumber('seed', v.seed) ?? 0,
    mode: v.mode as ReadingMode,
    ...settingsFlags(v, { seed: false }),
  });
}

/** The flags, with the extractive engine where they name none (said on stderr): an evaluation runs with no model or server. */
function engineOrExtractive(given: EvalFlags, say: (line: string) => void): EvalFlags {
  const defaulted = withDefaultEngine(given, EXTRACTIVE_INFO.id);
  if (defaulted)
    say(
      "No --engine or --base-url: evaluating with the extractive engine (the paper's heuristic memory, no model). For a model give --base-url URL (a server) or --engine webllm.",
    );
  return defaulted ?? given;
}

/** The line that says what a sweep reads, before its first sample. */
function describeSweep(s: { engine: Engine; spec: SweepSpec; prompts: ResolvedPrompts; essay: Haystack; samples: number; concurrency: number }): string {
  const { spec } = s;
  const mode = spec.mode === 'memory' ? `memory mode: chunk ${whole(spec.chunkTokens)}, memory ${whole(spec.memoryTokens)} tokens` : 'full context';
  return (
    `${describeEngine(s.engine)}; ${mode}; ${describePrompts(s.prompts.record)}; essay haystack ${s.essay.name}; ` +
    `${whole(s.samples)} samples, ${whole(s.concurrency)} at a time, sweep seed ${spec.seed}.`
  );
}

export async function evalCommand(argv: string[], printHelp: () => number): Promise<number> {
  const { values: given } = parseFlags(argv, EVAL_OPTIONS);
  if (given.help) return printHelp();
  const progress = new Progress(progressMode(given, process.stderr), process.stderr);
  const say = progress.say;
  const v = engineOrExtractive(given, say);
  if (v.data) return datasetEvalCommand(v, progress);
  const spec = sweepOf(v);
  const concurrency = wholeNumber('concurrency', v.concurrency, 1) ?? 8;
  engineConfigOf(v);
  const essay = await loadHaystack(v.haystack);
  const { engine, config } = await openEngine(v, (n) => say(`  ${n.reason} Retrying in ${seconds(n.delayMs)}.`), say);
  const prompts = await choosePrompts(v, engine.id, say);
  spec.templates = { ...prompts.set.templates };
  const planned = planSweep(spec);
  process.stdout.write(`${describeSweep({ engine, spec, prompts, essay, samples: planned.length, concurrency })}\n\n`);

  const stop = new AbortController();
  const onSigint = () => stop.abort();
  process.once('SIGINT', onSigint);
  const results: SampleResult[] = [];
  const queue = [...planned];
  let failure: unknown;
  const t0 = performance.now();
  const steps = await sampleSteps(engine, sweepStepTokens(spec, { contextWindow: engine.contextWindow, count: (s) => engine.tokenizer.count(s) }), say);
  progress.begin();
  // One sample at a time on a terminal: its chunks are counted on the line, as a long sample reads.
  const onStep =
    (steps?.size ?? concurrency) === 1 && progress.mode === 'bar'
      ? (s: { chunk: number; chunks: number }) =>
          progress.inner(`samples ${whole(results.length)}/${whole(planned.length)} · chunk ${whole(s.chunk)}/${whole(s.chunks)} of the next`)
      : undefined;
  const ctx = { tokenizer: engine.tokenizer, contextWindow: engine.contextWindow, essay, signal: stop.signal, onStep, fatal: stopsEverySample };
  // N readers take samples off one queue: N requests in flight, which a batching server serves together (see runReaders).
  const reader = async (generator: TextGenerator) => {
    while (queue.length > 0 && !stop.signal.aborted) {
      const sample = queue.shift()!;
      try {
        const r = await runSample(spec, sample, { ...ctx, generator });
        results.push(r);
        progress.sample(...sampleLine(r, results.length, planned.length));
      } catch (e) {
        if (!stop.signal.aborted) failure = e;
        stop.abort();
      }
    }
  };
  await runReaders(engine, steps, Math.min(concurrency, planned.length), reader);
  process.off('SIGINT', onSigint);
  progress.done();

  results.sort((a, b) => a.ordinal - b.ordinal);
  const cells = summarize(spec, results);
  process.stdout.write(formatTables(spec, cells));
  const tokens = results.reduce((n, r) => n + r.promptTokens + r.completionTokens, 0);
  const wall = (performance.now() - t0) / 1000;
  process.stdout.write(`\n${whole(results.length)} samples in ${wall.toFixed(1)} s: ${whole(tokens / wall)} tokens/s through the engine.\n`);
  const report: EvaluationReport = {
    engine: engine.id,
    model: typeof config.model === 'string' ? config.model : undefined,
    haystack: essay.name,
    prompts: prompts.record,
    spec,
    cells,
    samples: results,
  };
  if (v.json) writeText(v.json, reportJson(report));
  if (v.csv) writeText(v.csv, cellsCsv(cells));
  if (failure !== undefined) {
    progress.error(`Stopped by an error: ${failure instanceof Error ? failure.message : String(failure)}`);
    return 1;
  }
  if (stop.signal.aborted) {
    progress.error('Stopped; the table shows the samples finished so far.');
    return 130;
  }
  return 0;
}

/** A finished sample's progress line, and what the progress bar shows of it. */
function sampleLine(r: SampleResult, done: number, total: number): [string, { done: number; total: number; label: string }] {
  const outcome = r.scores ? `score ${r.scores.score.toFixed(2)}` : r.failed ? `failed: ${r.failed}` : 'skipped (too long for the engine)';
  const label = `${r.task} ${formatLength(r.length)} #${whole(r.index + 1)}`;
  return [`[${whole(done)}/${whole(total)}] ${label}: ${outcome}, ${seconds(r.chunkMs + r.answerMs)}`, { done, total, label }];
}

/** `eval --data`: dataset files by the paper's method (eval-data.ts). */
async function datasetEvalCommand(v: EvalFlags, progress: Progress): Promise<number> {
  const say = progress.say;
  const generated: string[] = (['tasks', 'haystack', 'csv', 'seed'] as const).filter((flag) => v[flag] !== undefined);
  if (v.mode !== 'memory') generated.push('mode');
  if (generated.length) throw new UsageError(`--${generated.join(', --')} ${generated.length === 1 ? 'is' : 'are'} for the generated tasks, not for --data.`);
  const settings = settingsFlags(v, { seed: false });
  try {
    const plan = planDatasetEval({
      data: v.data ?? [],
      method: v.method,
      prompts: await choosePrompts(v, engineIdOf(v), say),
      settings,
      samples: wholeNumber('samples', v.samples, 1),
      concurrency: wholeNumber('concurrency', v.concurrency, 1) ?? 8,
      json: v.json,
    });
    await checkDatasetFiles(plan);
    const { engine } = await openEngine(v, (n) => say(`  ${n.reason} Retrying in ${seconds(n.delayMs)}.`), say);
    return await runDatasetEval(plan, engine, {
      say,
      error: progress.error,
      begin: () => progress.begin(),
      sample: (line, step) => progress.sample(line, step),
      end: () => progress.done(),
      out: (text) => process.stdout.write(text),
      write: writeText,
      describeEngine: describeEngine(engine),
    });
  } catch (e) {
    if (e instanceof DatasetArgsError) throw new UsageError(e.message);
    throw e;
  }
}

function writeText(path: string, text: string): void {
  const fd = openOutput(path, 'w');
  writeSync(fd, text);
  closeSync(fd);
}
