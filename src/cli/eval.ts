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
import type { Engine, EngineConfig } from '../engines/engine';
import { EXTRACTIVE_INFO } from '../engines/extractive/info';
import { Haystack } from '../eval/haystack';
import { formatLength, parseLengths } from '../eval/lengths';
import { cellsCsv, type EvaluationReport, formatTables, reportJson } from '../eval/report';
import { type ComparedReport, compareMethods, formatComparison, sampleRun } from '../eval/compare';
import { EVAL_METHOD_NAMES, type EvalMethod } from '../eval/infmem-read';
import { runInfmemSample } from '../eval/infmem-sample';
import {
  type PlannedSample,
  planSweep,
  type ReadingMode,
  runSample,
  type SampleResult,
  summarize,
  type SweepContext,
  sweepSpec,
  type SweepSpec,
  sweepStepTokens,
} from '../eval/sweep';
import { isTaskId, TASK_IDS, type TaskId } from '../eval/tasks';
import { ingestBytes } from '../ingest/ingest';
import { parseFlags, settingsFlags, UsageError, wholeNumber } from './flags';
import { choosePrompts, describeEngine, describePrompts, engineConfigOf, engineIdOf, openEngine, seconds, withDefaultEngine } from './engine';
import {
  EVAL_INFMEM_OPTIONS,
  type EvalMethods,
  evalMethodsOf,
  infmemSettingsOf,
  type InfmemEvalSettings,
  openInfmemReader,
  refuseInfmemFlags,
} from './eval-infmem';
import { checkDatasetFiles, DatasetArgsError, planDatasetEval, runDatasetEval } from './eval-data';
import { runReaders, type SampleSteps, sampleSteps } from './eval-groups';
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
  ...EVAL_INFMEM_OPTIONS,
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
  const chosen = evalMethodsOf(v.method, v.data !== undefined);
  const infmem = chosen.methods.includes('infmem') ? infmemSettingsOf(v) : undefined;
  if (!infmem) refuseInfmemFlags(v);
  if (v.data) return datasetEvalCommand(v, progress, { ...chosen, infmem });
  const spec = sweepOf(v);
  if (infmem && spec.mode === 'full')
    throw new UsageError('--mode full reads the whole document in one request: it goes with MemAgent only, not --method infmem or both.');
  const concurrency = wholeNumber('concurrency', v.concurrency, 1) ?? 8;
  engineConfigOf(v);
  const essay = await loadHaystack(v.haystack);
  const { engine, config } = await openEngine(v, (n) => say(`  ${n.reason} Retrying in ${seconds(n.delayMs)}.`), say);
  const memagent = chosen.methods.includes('memagent');
  const prompts = memagent ? await choosePrompts(v, engine.id, say) : undefined;
  if (prompts) spec.templates = { ...prompts.set.templates };
  const reader = infmem ? await openInfmemReader(v, engine.id, infmem, { say, verbatim: false }) : undefined;
  const planned = planSweep(spec);
  const each = `${whole(planned.length)} samples${chosen.methods.length > 1 ? ' by each method' : ''}`;
  const lines = [
    prompts
      ? describeSweep({ engine, spec, prompts, essay, samples: planned.length, concurrency })
      : `${describeEngine(engine)}; essay haystack ${essay.name}; ${each}, ${whole(concurrency)} at a time, sweep seed ${spec.seed}.`,
    ...(reader ? [`${reader.about}.`] : []),
  ];
  process.stdout.write(`${lines.join('\n')}\n\n`);

  const stop = new AbortController();
  const onSigint = () => stop.abort();
  process.once('SIGINT', onSigint);
  const t0 = performance.now();
  // An engine that batches reads as many MemAgent samples together as one batch of the sweep's step holds.
  const stepTokens = sweepStepTokens(spec, { contextWindow: engine.contextWindow, count: (s) => engine.tokenizer.count(s) });
  const steps = memagent ? await sampleSteps(engine, stepTokens, say) : undefined;
  const ctx = { tokenizer: engine.tokenizer, contextWindow: engine.contextWindow, essay, signal: stop.signal, fatal: stopsEverySample };
  const readers: Record<EvalMethod, SampleReader> = {
    memagent: (sample, generator, onStep) => runSample(spec, sample, { ...ctx, generator, onStep }),
    // InfMem's requests go through its reader's steps (the extractive stand-ins or a server's raw completions).
    infmem: (sample, _generator, onStep) =>
      runInfmemSample(sample, {
        ...ctx,
        codec: reader!.codec,
        stepsFor: (d) => reader!.stepsFor(d, stop.signal),
        earlyStop: infmem!.earlyStop,
        onStep,
      }),
  };
  const results: SampleResult[] = [];
  let failure: unknown;
  progress.begin();
  const total = planned.length * chosen.methods.length;
  for (const method of chosen.methods) {
    if (stop.signal.aborted) break;
    const label = chosen.methods.length > 1 ? `${EVAL_METHOD_NAMES[method]} ` : '';
    const group = { engine, steps: method === 'memagent' ? steps : undefined, concurrency };
    failure ??= await readSamples(planned, readers[method], { ...group, stop, progress, results, total, label });
  }
  process.off('SIGINT', onSigint);
  progress.done();

  const report = sweepReport({ engine, config, essay, prompts, spec, results, methods: chosen.methods, infmem, wallMs: performance.now() - t0 });
  if (v.json) writeText(v.json, reportJson(report));
  if (v.csv) writeText(v.csv, cellsCsv(report.cells));
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

/** Prints each method's tables (and with both their comparison) and returns the report to export. */
function sweepReport(run: {
  engine: Engine;
  config: EngineConfig;
  essay: Haystack;
  prompts?: ResolvedPrompts;
  spec: SweepSpec;
  results: SampleResult[];
  methods: EvalMethod[];
  infmem?: InfmemEvalSettings;
  wallMs: number;
}): EvaluationReport & Partial<ComparedReport> {
  const { engine, config, essay, prompts, spec, results, infmem } = run;
  const chosen = { methods: run.methods };
  results.sort((a, b) => a.ordinal - b.ordinal);
  const byMethod = Object.fromEntries(
    chosen.methods.map((m) => [
      m,
      summarize(
        spec,
        results.filter((r) => (r.method ?? 'memagent') === m),
      ),
    ]),
  );
  for (const method of chosen.methods) {
    if (chosen.methods.length > 1 || method === 'infmem')
      process.stdout.write(`${EVAL_METHOD_NAMES[method]}${method === 'infmem' ? ` (early stop ${infmem!.earlyStop})` : ''}:\n`);
    process.stdout.write(formatTables(spec, byMethod[method]!));
    if (chosen.methods.length > 1) process.stdout.write('\n');
  }
  const comparison = compareMethods(results.map(sampleRun), [...spec.lengths].sort((a, b) => a - b).map(formatLength));
  if (chosen.methods.length > 1) process.stdout.write(`Both methods on the same samples, the same engine:\n${formatComparison(comparison, 'length')}`);
  const tokens = results.reduce((n, r) => n + r.promptTokens + r.completionTokens, 0);
  const wall = run.wallMs / 1000;
  process.stdout.write(`\n${whole(results.length)} samples in ${wall.toFixed(1)} s: ${whole(tokens / wall)} tokens/s through the engine.\n`);
  const report: EvaluationReport & Partial<ComparedReport> = {
    engine: engine.id,
    model: typeof config.model === 'string' ? config.model : undefined,
    haystack: essay.name,
    ...(prompts && { prompts: prompts.record }),
    spec,
    cells: byMethod[chosen.methods[0]!]!,
    samples: results,
    ...(infmem && { methods: chosen.methods, infmem, byMethod, comparison }),
  };
  return report;
}

/** One sample read by one method through `generator` (the engine, or the reader's member of a batch). */
type SampleReader = (sample: PlannedSample, generator: TextGenerator, onStep?: SweepContext['onStep']) => Promise<SampleResult>;

/** Who reads the samples: the engine, and the batch they share where it batches, else `concurrency` readers. */
interface SampleGroup {
  engine: Engine;
  steps: SampleSteps | undefined;
  concurrency: number;
}

/** Readers take samples off one queue; returns the error that stopped them. */
async function readSamples(
  planned: readonly PlannedSample[],
  read: SampleReader,
  run: SampleGroup & { stop: AbortController; progress: Progress; results: SampleResult[]; total: number; label: string },
): Promise<unknown> {
  const { stop, progress, results, total } = run;
  const queue = [...planned];
  let failure: unknown;
  // One sample at a time on a terminal: its chunks are counted on the line, as a long sample reads.
  const onStep =
    (run.steps?.size ?? run.concurrency) === 1 && progress.mode === 'bar'
      ? (s: { chunk: number; chunks: number }) =>
          progress.inner(`${run.label}samples ${whole(results.length)}/${whole(total)} · chunk ${whole(s.chunk)}/${whole(s.chunks)} of the next`)
      : undefined;
  const reader = async (generator: TextGenerator) => {
    while (queue.length > 0 && !stop.signal.aborted) {
      const sample = queue.shift()!;
      try {
        const r = await read(sample, generator, onStep);
        results.push(r);
        const outcome = r.scores ? `score ${r.scores.score.toFixed(2)}` : r.failed ? `failed: ${r.failed}` : 'skipped (too long for the engine)';
        const read$ = r.method === 'infmem' ? `, ${whole(r.chunksRead ?? 0)} of ${whole(r.chunks)} chunks read` : '';
        const label = `${run.label}${r.task} ${formatLength(r.length)} #${whole(r.index + 1)}`;
        progress.sample(`[${whole(results.length)}/${whole(total)}] ${label}: ${outcome}${read$}, ${seconds(r.chunkMs + r.answerMs)}`, {
          done: results.length,
          total,
          label,
        });
      } catch (e) {
        if (!stop.signal.aborted) failure = e;
        stop.abort();
      }
    }
  };
  // N readers take samples off one queue: N requests in flight, which a batching server serves together (see runReaders).
  await runReaders(run.engine, run.steps, Math.min(run.concurrency, planned.length), reader);
  return failure;
}

/** `eval --data`: dataset files by the paper's method, InfMem's, or both (eval-data.ts). */
async function datasetEvalCommand(v: EvalFlags, progress: Progress, chosen: EvalMethods & { infmem?: InfmemEvalSettings }): Promise<number> {
  const say = progress.say;
  const generated: string[] = (['tasks', 'haystack', 'csv', 'seed'] as const).filter((flag) => v[flag] !== undefined);
  if (v.mode !== 'memory') generated.push('mode');
  if (generated.length) throw new UsageError(`--${generated.join(', --')} ${generated.length === 1 ? 'is' : 'are'} for the generated tasks, not for --data.`);
  const settings = settingsFlags(v, { seed: false });
  const memagent = chosen.methods.includes('memagent');
  try {
    const plan = planDatasetEval({
      data: v.data ?? [],
      method: chosen.style,
      prompts: memagent ? await choosePrompts(v, engineIdOf(v), say) : undefined,
      settings,
      samples: wholeNumber('samples', v.samples, 1),
      concurrency: wholeNumber('concurrency', v.concurrency, 1) ?? 8,
      json: v.json,
    });
    await checkDatasetFiles(plan);
    const { engine } = await openEngine(v, (n) => say(`  ${n.reason} Retrying in ${seconds(n.delayMs)}.`), say);
    const infmem = chosen.infmem && { ...chosen.infmem, reader: await openInfmemReader(v, engine.id, chosen.infmem, { say, verbatim: true }) };
    return await runDatasetEval(
      plan,
      engine,
      {
        say,
        error: progress.error,
        begin: () => progress.begin(),
        sample: (line, step) => progress.sample(line, step),
        end: () => progress.done(),
        out: (text) => process.stdout.write(text),
        write: writeText,
        describeEngine: describeEngine(engine),
      },
      { methods: chosen.methods, ...(infmem && { infmem }) },
    );
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
