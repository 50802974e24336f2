/**
 * The evaluation harness from the command line: the same generators, loop and
 * scorers as the Evaluate page, with files instead of IndexedDB.
 *
 *   npm run eval -- --engine extractive --tasks niah_single_1,vt --lengths 8k,32k,128k --samples 5
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { isAbortError } from '../core/generation';
import type { Engine } from '../engines/engine';
import { createEngine, ENGINES } from '../engines/registry';
import { generatedEssay } from '../eval/essay';
import { Haystack } from '../eval/haystack';
import { formatLength, parseLengths } from '../eval/lengths';
import { cellsCsv, type EvaluationReport, formatTables, reportJson } from '../eval/report';
import { planSweep, type ReadingMode, runSweep, type SampleResult, summarize, sweepSpec } from '../eval/sweep';
import { isTaskId, TASK_IDS, type TaskId } from '../eval/tasks';
import { ingestBytes } from '../ingest/ingest';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
/** The corpus book that sits beside the project; the generated essay stands in where it is absent. */
const DEFAULT_HAYSTACK = resolve(ROOT, '../shared/corpus/frankenstein.txt');

const HELP = `Usage: npm run eval -- [options]

  --engine ID        engine to evaluate: ${ENGINES.map((e) => e.id).join(', ')} (default extractive)
  --model ID         model, for engines that offer several
  --base-url URL     server address, for an OpenAI-compatible server (its key from OPENAI_API_KEY)
  --tasks LIST       comma-separated: ${TASK_IDS.join(', ')} (default all)
  --lengths LIST     document lengths, e.g. 8k,32k,128k,1m (default 8k)
  --samples N        samples per task × length (default 5)
  --seed N           sweep seed (default 0)
  --chunk N          chunk size in tokens (default 5000)
  --memory N         memory size in tokens (default 1024)
  --mode MODE        memory (the MemAgent loop) or full (whole document in one prompt)
  --haystack FILE    text whose sentences fill the "essay" tasks (default the corpus book, else a generated essay)
  --json FILE        write every sample and the table as JSON
  --csv FILE         write the table as CSV
`;

class UsageError extends Error {}

function positiveInt(name: string, value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new UsageError(`--${name} must be a whole number, got "${value}".`);
  return n;
}

function options(argv: string[]) {
  try {
    return parseArgs({ args: argv, options: OPTIONS }).values;
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
}

const OPTIONS = {
  engine: { type: 'string', default: 'extractive' },
  model: { type: 'string' },
  'base-url': { type: 'string' },
  tasks: { type: 'string' },
  lengths: { type: 'string', default: '8k' },
  samples: { type: 'string' },
  seed: { type: 'string' },
  chunk: { type: 'string' },
  memory: { type: 'string' },
  mode: { type: 'string', default: 'memory' },
  haystack: { type: 'string' },
  json: { type: 'string' },
  csv: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

function parse(argv: string[]) {
  const values = options(argv);
  const tasks = values.tasks ? [...new Set(values.tasks.split(',').map((t) => t.trim()).filter(Boolean))] : [...TASK_IDS];
  const unknown = tasks.filter((t) => !isTaskId(t));
  if (unknown.length) throw new UsageError(`Unknown task ${unknown.join(', ')}. Tasks: ${TASK_IDS.join(', ')}.`);
  if (values.mode !== 'memory' && values.mode !== 'full') throw new UsageError(`--mode is memory or full, got "${values.mode}".`);
  let lengths: number[];
  try {
    lengths = parseLengths(values.lengths);
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
  const samples = positiveInt('samples', values.samples, 5);
  if (samples < 1) throw new UsageError('--samples must be at least 1.');
  return {
    help: values.help ?? false,
    engine: values.engine,
    model: values.model,
    baseUrl: values['base-url'],
    haystack: values.haystack,
    json: values.json,
    csv: values.csv,
    spec: sweepSpec({
      tasks: tasks as TaskId[],
      lengths,
      samples,
      seed: positiveInt('seed', values.seed, 0),
      mode: values.mode as ReadingMode,
      ...(values.chunk !== undefined && { chunkTokens: positiveInt('chunk', values.chunk, 0) }),
      ...(values.memory !== undefined && { memoryTokens: positiveInt('memory', values.memory, 0) }),
    }),
  };
}

/**
 * The one place that turns the command line into an engine: its id and its
 * config (a model, a server address), as the registry takes them. A key comes
 * from the environment, not from a flag that shell history would keep.
 */
function openEngine(choice: { engine: string; model?: string; baseUrl?: string }): Promise<Engine> {
  const config: Record<string, string> = {};
  if (choice.model) config.model = choice.model;
  if (choice.baseUrl) config.baseUrl = choice.baseUrl;
  return createEngine(choice.engine, config, { apiKey: process.env.OPENAI_API_KEY });
}

/** A book read as the app reads it (any format it takes, Gutenberg header and footer cut). */
async function loadHaystack(file: string | undefined): Promise<Haystack> {
  const path = file ?? DEFAULT_HAYSTACK;
  if (!file && !existsSync(path)) {
    process.stderr.write('The corpus book is not here; the generated essay fills the essay tasks.\n');
    return generatedEssay();
  }
  const { text } = await ingestBytes(basename(path), new Uint8Array(readFileSync(path)));
  return Haystack.fromText(basename(path), text);
}

async function main(argv: string[]): Promise<number> {
  const args = parse(argv);
  if (args.help) {
    process.stdout.write(HELP);
    return 0;
  }
  const { spec } = args;
  const essay = await loadHaystack(args.haystack);
  const engine = await openEngine(args);
  const stop = new AbortController();
  process.once('SIGINT', () => stop.abort());

  process.stdout.write(
    `Engine ${engine.id}${args.model ? ` (${args.model})` : ''}, ${spec.mode === 'memory' ? `memory mode: chunk ${spec.chunkTokens}, memory ${spec.memoryTokens} tokens` : 'full context'}; ` +
      `essay haystack ${essay.name}; ${spec.samples} sample${spec.samples === 1 ? '' : 's'} per cell, seed ${spec.seed}.\n\n`,
  );
  const results: SampleResult[] = [];
  const total = planSweep(spec).length;
  const tty = process.stderr.isTTY;
  try {
    const sweep = runSweep(spec, {
      generator: engine,
      tokenizer: engine.tokenizer,
      contextWindow: engine.contextWindow,
      essay,
      signal: stop.signal,
      onStep: tty ? (s) => process.stderr.write(`\r  chunk ${s.chunk}/${s.chunks}`) : undefined,
    });
    for await (const r of sweep) {
      results.push(r);
      const outcome = r.scores ? `score ${r.scores.score.toFixed(2)}` : 'skipped (too long for the engine)';
      const secs = ((r.chunkMs + r.answerMs) / 1000).toFixed(1);
      process.stderr.write(`${tty ? '\r\x1b[K' : ''}[${results.length}/${total}] ${r.task} ${formatLength(r.length)} #${r.index + 1}: ${outcome}, ${secs} s\n`);
    }
  } catch (e) {
    if (!isAbortError(e)) throw e;
    process.stderr.write('\nStopped; the table shows the samples finished so far.\n');
  }

  const cells = summarize(spec, results);
  process.stdout.write(formatTables(spec, cells));
  const report: EvaluationReport = { engine: engine.id, model: args.model, haystack: essay.name, spec, cells, samples: results };
  if (args.json) writeFileSync(args.json, reportJson(report));
  if (args.csv) writeFileSync(args.csv, cellsCsv(cells));
  return stop.signal.aborted ? 130 : 0;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (e: unknown) => {
    if (e instanceof UsageError) process.stderr.write(`${e.message}\n\n${HELP}`);
    else process.stderr.write(`${e instanceof Error ? e.message : String(e)}\n`);
    process.exit(e instanceof UsageError ? 2 : 1);
  },
);
