/**
 * memagent: the app's memory loop from the command line, against any
 * OpenAI-compatible server (vLLM, SGLang, llama.cpp, Ollama). The loop, the
 * chunker, the budget and the evaluation harness are the app's own modules;
 * only storage differs: a JSONL file instead of IndexedDB.
 *
 *   memagent read book.txt --question "..." --base-url http://127.0.0.1:8000/v1 --model NAME
 *   memagent eval --base-url http://127.0.0.1:8000/v1 --model NAME --tasks niah_single_1 --lengths 8k,32k
 */
import { closeSync, existsSync, fsyncSync, openSync, readFileSync, statSync, truncateSync, writeSync } from 'node:fs';
import { basename, dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type ParseArgsOptionsConfig, parseArgs } from 'node:util';
import { DEFAULT_CHUNK_TOKENS, DEFAULT_MEMORY_TOKENS, planBudget } from '../core/budget';
import { type ChunkSpan, chunkAll } from '../core/chunker';
import { isAbortError } from '../core/generation';
import { APP_LOOP_METHOD, memoryLoop } from '../core/loop';
import type { PromptRecord } from '../core/prompt-sets';
import { type PromptTemplates, templateOverhead } from '../core/prompts';
import type { Engine, EngineConfig } from '../engines/engine';
import { OpenAIEngine, type RetryNotice } from '../engines/openai';
import { createEngine, ENGINES } from '../engines/registry';
import { generatedEssay } from '../eval/essay';
import { Haystack } from '../eval/haystack';
import { formatLength, parseLengths } from '../eval/lengths';
import { cellsCsv, type EvaluationReport, formatTables, reportJson } from '../eval/report';
import { planSweep, type ReadingMode, runSample, type SampleResult, summarize, sweepSpec } from '../eval/sweep';
import { isTaskId, TASK_IDS, type TaskId } from '../eval/tasks';
import { ingestBytes } from '../ingest/ingest';
import { checkDatasetFiles, DatasetArgsError, planDatasetEval, runDatasetEval } from './eval-data';
import { type PromptFlags, PromptOptionError, type ResolvedPrompts, resolveCliPrompts } from './prompts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
/** The corpus book beside the project fills the "essay" tasks; the generated essay stands in where it is absent. */
const DEFAULT_HAYSTACK = resolve(ROOT, '../shared/corpus/frankenstein.txt');

const JOURNAL_FORMAT = 'memagent-read';
const JOURNAL_VERSION = 1;

class UsageError extends Error {}

const HELP = `memagent: read a whole book with a language model that keeps notes (the MemAgent memory loop).

Usage:
  memagent read <file> --question TEXT --base-url URL [--model NAME] [options]
  memagent eval --base-url URL [--model NAME] [--tasks LIST] [--lengths LIST] [options]
  memagent eval --base-url URL [--model NAME] --data eval_50.json [--data eval_200.json …] [options]

Server (both commands):
  --base-url URL       the server's OpenAI API, e.g. http://127.0.0.1:8000/v1
  --model NAME         served model name (default: the first the server lists)
  --api-key KEY        bearer key; MEMAGENT_API_KEY or OPENAI_API_KEY in the environment also work
  --context N          context window in tokens, for servers that do not report it (Ollama)
  --retries N          attempts repeated after 429, 5xx or a dropped connection (default 8)
  --retry-delay MS     first wait before a retry, doubled each time (default 1000)
  --engine ID          ${ENGINES.map((e) => e.id).join(' or ')} (default: openai with --base-url)

Prompts (both commands):
  --prompts SET        memagent (the prompts of the paper's runs, read from MemAgent's recurrent.py),
                       memagent-boxed (recurrent_boxed.py), app (this app's wording), or FILE.json
                       holding edited templates {"update": ..., "final": ...}. Default: memagent for a
                       model, fetched once from the MemAgent repository at a pinned commit and kept in
                       the cache; app's wording while that file cannot be had (said so), and for extractive
  --prompts-file PATH  a local copy of recurrent.py or recurrent_boxed.py (checked by its SHA-256)
  --prompts-base URL   a mirror to fetch <URL>/taskutils/memory_eval/utils/recurrent.py from

read:
  --question, -q TEXT  what the memory is kept for (on --resume, the journal's question)
  --out FILE           journal of revisions, one JSON line each (default <file>.memagent.jsonl)
  --resume             continue the read the journal holds, from its next chunk
  --force              start over, replacing an existing journal
  --chunk N            chunk size in tokens (default ${DEFAULT_CHUNK_TOKENS}, less if the context needs it)
  --memory N           memory size in tokens (default ${DEFAULT_MEMORY_TOKENS})
  --temperature X      default 0.7
  --top-p X            default 0.95
  --seed N             sampling seed
  --keep-gutenberg     keep Project Gutenberg's header and footer

eval:
  --concurrency N      samples read at once (default 8): a batching server turns them into throughput
  --tasks LIST         comma-separated: ${TASK_IDS.join(', ')} (default all)
  --lengths LIST       document lengths, e.g. 8k,32k,128k (default 8k)
  --samples N          samples per task and length (default 5)
  --seed N             sweep seed (default 0)
  --chunk N, --memory N, --mode memory|full, --haystack FILE, --json FILE, --csv FILE

eval --data (RULER-HotpotQA files as published, read by the paper's method):
  --data FILE          a dataset file (JSON list or JSON Lines); repeat it, one file per length
  --method M           recurrent (the answer after "the answer is") or recurrent-boxed (the answer
                       in \\boxed{}); default: the one the prompt set asks for: recurrent with
                       memagent, recurrent-boxed with memagent-boxed (and with this app's wording)
  --samples N          items read from each file (default all)
  --chunk N            exact tokens per chunk (default ${DEFAULT_CHUNK_TOKENS}); --memory N: max tokens per reply (default ${DEFAULT_MEMORY_TOKENS})
  --json FILE          the method, the prompts (set and SHA-256) and every file's metrics and samples
`;

const SERVER_OPTIONS = {
  prompts: { type: 'string' },
  'prompts-file': { type: 'string' },
  'prompts-base': { type: 'string' },
  'base-url': { type: 'string' },
  model: { type: 'string' },
  'api-key': { type: 'string' },
  context: { type: 'string' },
  retries: { type: 'string' },
  'retry-delay': { type: 'string' },
  engine: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

function parse<T extends ParseArgsOptionsConfig>(argv: string[], options: T) {
  try {
    return parseArgs({ args: argv, options: { ...SERVER_OPTIONS, ...options }, allowPositionals: true });
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
}

function wholeNumber(name: string, value: string | undefined, min = 0): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < min) throw new UsageError(`--${name} must be a whole number${min ? ` of at least ${min}` : ''}, got "${value}".`);
  return n;
}

function number(name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isFinite(n) || n < 0) throw new UsageError(`--${name} must be a number, got "${value}".`);
  return n;
}

interface ServerChoice {
  'base-url'?: string;
  model?: string;
  'api-key'?: string;
  context?: string;
  retries?: string;
  'retry-delay'?: string;
  engine?: string;
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}

/** The engine the flags name. */
function engineIdOf(v: ServerChoice): string {
  const id = v.engine ?? (v['base-url'] ? 'openai' : undefined);
  if (!id) {
    throw new UsageError('Give --base-url, the address of an OpenAI-compatible server (e.g. http://127.0.0.1:8000/v1), or --engine extractive to try the loop without a model.');
  }
  return id;
}

/** The engine the flags name; for a server, connected and measured before anything is read. */
async function openEngine(v: ServerChoice, onRetry: (n: RetryNotice) => void): Promise<{ engine: Engine; config: EngineConfig }> {
  const id = engineIdOf(v);
  const config: Record<string, string | number> = {};
  if (v['base-url']) config.baseUrl = v['base-url'];
  if (v.model) config.model = v.model;
  const context = wholeNumber('context', v.context, 1);
  if (context) config.contextWindow = context;
  const maxRetries = wholeNumber('retries', v.retries);
  const baseDelayMs = wholeNumber('retry-delay', v['retry-delay']);
  const engine = await createEngine(id, config, {
    apiKey: v['api-key'] ?? process.env.MEMAGENT_API_KEY ?? process.env.OPENAI_API_KEY,
    retry: { ...(maxRetries !== undefined && { maxRetries }), ...(baseDelayMs !== undefined && { baseDelayMs }) },
    onRetry,
  });
  return { engine, config };
}

/** The prompt set the flags choose (see prompts.ts); a flag that cannot be used is a usage error. */
async function choosePrompts(flags: PromptFlags, engineId: string, say: (line: string) => void): Promise<ResolvedPrompts> {
  try {
    return await resolveCliPrompts(flags, engineId, { say });
  } catch (e) {
    if (e instanceof PromptOptionError) throw new UsageError(e.message);
    throw e;
  }
}

function describePrompts(record: PromptRecord): string {
  return `prompts ${record.label}${record.file ? ` (${record.file.path.split('/').pop()}, SHA-256 ${record.file.sha256.slice(0, 12)}…)` : ''}`;
}

function describeEngine(engine: Engine): string {
  if (!(engine instanceof OpenAIEngine)) return `engine ${engine.id}`;
  const { server } = engine;
  return (
    `model ${server.model} at ${server.baseUrl} (context ${server.serverContextWindow.toLocaleString('en')} tokens, ` +
    `token counts ${server.counts.source === 'server' ? 'from the server' : 'estimated locally with a margin'})`
  );
}

// ---------------------------------------------------------------- read

interface JournalHeader {
  type: typeof JOURNAL_FORMAT;
  version: number;
  document: { name: string; hash: string; chars: number };
  question: string;
  engine: { id: string; model?: string; baseUrl?: string };
  settings: {
    requestedChunkTokens: number;
    chunkTokens: number;
    memoryTokens: number;
    contextTokens: number;
    temperature: number;
    topP: number;
    seed?: number;
  };
  templates: PromptTemplates;
  /** Which prompt set the templates are, and for MemAgent's the file and hash they were read from. */
  prompts?: PromptRecord;
  /** The set's memory before the first chunk (this app's when absent). */
  initialMemory?: string;
  /** [start, end, tokens] of every chunk: a resume reads exactly these, whatever the server now allows. */
  chunks: [number, number, number][];
  createdAt: string;
}

interface JournalRevision {
  type: 'revision';
  index: number;
  start: number;
  end: number;
  chunkTokens: number;
  memory: string;
  memoryTokens: number;
  promptTokens: number;
  completionTokens: number;
  ms: number;
  finishReason: string;
  retries: number;
  committedAt: string;
}

interface JournalAnswer {
  type: 'answer';
  answer: string;
  reply: string;
  promptTokens: number;
  completionTokens: number;
  ms: number;
  retries: number;
  committedAt: string;
}

interface Journal {
  header: JournalHeader;
  revisions: JournalRevision[];
  answer?: JournalAnswer;
  /** Bytes of complete lines: a line cut off by a crash is dropped on resume. */
  validBytes: number;
}

/** Reads a journal; a last line without its newline was being written when the read stopped, and does not count. */
function readJournal(path: string): Journal {
  const bytes = readFileSync(path);
  const end = bytes.lastIndexOf(0x0a) + 1;
  const lines = bytes.subarray(0, end).toString('utf8').split('\n').slice(0, -1);
  const parsed = lines.map((line, i) => {
    try {
      return JSON.parse(line) as { type?: string };
    } catch {
      throw new UsageError(`${path} line ${i + 1} is not JSON: the journal is damaged. Start over with --force.`);
    }
  });
  const header = parsed[0] as JournalHeader | undefined;
  if (!header || header.type !== JOURNAL_FORMAT || header.version !== JOURNAL_VERSION) {
    throw new UsageError(`${path} is not a memagent read journal. Choose another --out, or --force to replace it.`);
  }
  const revisions: JournalRevision[] = [];
  let answer: JournalAnswer | undefined;
  for (const [i, line] of parsed.slice(1).entries()) {
    if (line.type === 'revision') {
      const r = line as JournalRevision;
      if (r.index !== revisions.length || answer) throw new UsageError(`${path} line ${i + 2} holds revision ${r.index + 1} out of order: the journal is damaged.`);
      revisions.push(r);
    } else if (line.type === 'answer') {
      answer = line as JournalAnswer;
    }
  }
  return { header, revisions, answer, validBytes: end };
}

/** Appends lines, each on disk before the next step starts, so that a crash loses at most the step in flight. */
class JournalWriter {
  private readonly fd: number;

  constructor(path: string, fresh: boolean, validBytes = 0) {
    if (!fresh) truncateSync(path, validBytes);
    this.fd = openSync(path, fresh ? 'w' : 'a');
  }

  append(line: object): void {
    writeSync(this.fd, `${JSON.stringify(line)}\n`);
    fsyncSync(this.fd);
  }

  close(): void {
    closeSync(this.fd);
  }
}

function readFileBytes(path: string): Uint8Array<ArrayBuffer> {
  const buf = readFileSync(path);
  const out = new Uint8Array(new ArrayBuffer(buf.byteLength));
  out.set(buf);
  return out;
}

const READ_OPTIONS = {
  question: { type: 'string', short: 'q' },
  out: { type: 'string', short: 'o' },
  resume: { type: 'boolean' },
  force: { type: 'boolean' },
  chunk: { type: 'string' },
  memory: { type: 'string' },
  temperature: { type: 'string' },
  'top-p': { type: 'string' },
  seed: { type: 'string' },
  'keep-gutenberg': { type: 'boolean' },
} as const;

async function readCommand(argv: string[]): Promise<number> {
  const { values: v, positionals } = parse(argv, READ_OPTIONS);
  if (v.help) return help();
  const file = positionals[0];
  if (!file) throw new UsageError('Name the file to read: memagent read <file> --question "..."');
  if (!existsSync(file)) throw new UsageError(`There is no file ${file}.`);
  const out = v.out ?? `${file}.memagent.jsonl`;
  const tty = process.stderr.isTTY;
  const say = (line: string) => process.stderr.write(`${tty ? '\r\x1b[K' : ''}${line}\n`);

  const doc = await ingestBytes(basename(file), readFileBytes(file), { stripGutenberg: !v['keep-gutenberg'] });
  let journal: Journal | null = null;
  if (v.resume && existsSync(out)) {
    journal = readJournal(out);
    const h = journal.header;
    if (h.document.hash !== doc.hash) throw new UsageError(`${out} was written for another file ("${h.document.name}"), not ${file}.`);
    if (v.question !== undefined && v.question.trim() !== h.question) {
      throw new UsageError(`${out} reads for another question ("${h.question}"). Drop --question to continue it, or choose another --out.`);
    }
    if (h.chunks.at(-1)?.[1] !== doc.text.length) throw new UsageError(`${out} does not cover this text: its chunks were cut for another version. Start over with --force.`);
    const clash = (flag: string, given: string | undefined, kept: number | undefined) => {
      if (given !== undefined && Number(given) !== kept) throw new UsageError(`${out} was read with --${flag} ${kept}; a resume keeps it. Drop --${flag}, or start over with --force.`);
    };
    clash('chunk', v.chunk, h.settings.requestedChunkTokens);
    clash('memory', v.memory, h.settings.memoryTokens);
    const asked = v['prompts-file'] !== undefined ? 'file' : v.prompts === undefined ? undefined : /\.json$/i.test(v.prompts) ? 'custom' : v.prompts;
    if (asked !== undefined && h.prompts && asked !== h.prompts.set) {
      throw new UsageError(`${out} was read with the prompts ${h.prompts.label}; a resume keeps them. Drop --prompts and --prompts-file, or start over with --force.`);
    }
  } else if (!v.resume && !v.force && existsSync(out) && statSync(out).size > 0) {
    throw new UsageError(`${out} already holds a read. Continue it with --resume, start over with --force, or choose another --out.`);
  }
  const question = (v.question ?? journal?.header.question ?? '').trim();
  if (!question) throw new UsageError('Give the question with --question "...": the memory keeps what helps answer it.');

  let step = journal?.revisions.length ?? 0;
  const { engine, config } = await openEngine(v, (n) =>
    say(`  step ${step + 1}: ${n.reason} Retrying in ${seconds(n.delayMs)} (retry ${n.attempt}).`),
  );

  let header: JournalHeader;
  let chunks: ChunkSpan[];
  if (journal) {
    header = journal.header;
    chunks = header.chunks.map(([start, end, tokens]) => ({ start, end, tokens }));
  } else {
    const prompts = await choosePrompts(v, engine.id, say);
    const templates = { ...prompts.set.templates };
    const count = (s: string) => engine.tokenizer.count(s);
    const requestedChunkTokens = wholeNumber('chunk', v.chunk, 1) ?? DEFAULT_CHUNK_TOKENS;
    const budget = planBudget({
      contextWindow: engine.contextWindow,
      templateTokens: templateOverhead(templates.update, count),
      questionTokens: count(question),
      memoryTokens: wholeNumber('memory', v.memory, 1) ?? DEFAULT_MEMORY_TOKENS,
      requestedChunkTokens,
    });
    chunks = chunkAll(doc.text, engine.tokenizer, budget.chunkTokens);
    const seed = wholeNumber('seed', v.seed);
    header = {
      type: JOURNAL_FORMAT,
      version: JOURNAL_VERSION,
      document: { name: doc.name, hash: doc.hash, chars: doc.text.length },
      question,
      engine: {
        id: engine.id,
        ...(engine instanceof OpenAIEngine && { model: engine.model, baseUrl: engine.server.baseUrl }),
      },
      settings: {
        requestedChunkTokens,
        chunkTokens: budget.chunkTokens,
        memoryTokens: budget.memoryTokens,
        contextTokens: budget.contextTokens,
        temperature: number('temperature', v.temperature) ?? 0.7,
        topP: number('top-p', v['top-p']) ?? 0.95,
        ...(seed !== undefined && { seed }),
      },
      templates,
      prompts: prompts.record,
      initialMemory: prompts.set.initialMemory,
      chunks: chunks.map((c) => [c.start, c.end, c.tokens]),
      createdAt: new Date().toISOString(),
    };
  }
  if (journal?.answer) {
    say(`${out} is a finished read: every chunk is read and answered.`);
    process.stdout.write(`${journal.answer.answer}\n`);
    return 0;
  }

  const total = chunks.length;
  const tokens = chunks.reduce((n, c) => n + c.tokens, 0);
  say(
    `${doc.name}: ${tokens.toLocaleString('en')} tokens in ${total} chunks of up to ${header.settings.chunkTokens.toLocaleString('en')}, ` +
      `memory ${header.settings.memoryTokens.toLocaleString('en')} tokens; ${describeEngine(engine)}` +
      `${header.prompts ? `; ${describePrompts(header.prompts)}` : ''}.`,
  );
  if (journal) say(`Resuming at chunk ${step + 1} of ${total}: ${step} already in ${out}.`);

  const writer = new JournalWriter(out, !journal, journal?.validBytes);
  if (!journal) writer.append(header);
  const stop = new AbortController();
  const onSigint = () => stop.abort();
  process.once('SIGINT', onSigint);
  const t0 = performance.now();
  try {
    const loop = memoryLoop({
      text: doc.text,
      chunks,
      question: header.question,
      generator: engine,
      templates: header.templates,
      memoryTokens: header.settings.memoryTokens,
      sampling: { temperature: header.settings.temperature, topP: header.settings.topP, seed: header.settings.seed },
      ...(header.initialMemory !== undefined && { initialMemory: header.initialMemory }),
      method: { ...APP_LOOP_METHOD, answerStyle: header.prompts?.answerStyle ?? APP_LOOP_METHOD.answerStyle },
      resume: journal?.revisions.length ? { nextChunk: step, memory: journal.revisions.at(-1)!.memory } : undefined,
      signal: stop.signal,
    });
    for await (const event of loop) {
      const { usage } = event.result;
      const retries = event.result.retries ?? 0;
      if (event.kind === 'revision') {
        const span = chunks[event.index]!;
        const memoryTokens = engine.tokenizer.count(event.memory);
        writer.append({
          type: 'revision',
          index: event.index,
          start: span.start,
          end: span.end,
          chunkTokens: span.tokens,
          memory: event.memory,
          memoryTokens,
          promptTokens: usage.promptTokens,
          completionTokens: usage.completionTokens,
          ms: Math.round(event.ms),
          finishReason: event.result.finishReason,
          retries,
          committedAt: new Date().toISOString(),
        } satisfies JournalRevision);
        step = event.index + 1;
        const line =
          `chunk ${step}/${total} (${Math.round((100 * step) / total)}%) · memory ${memoryTokens.toLocaleString('en')} tokens · ${seconds(event.ms)}` +
          (event.result.finishReason === 'length' ? ' · memory cut at its cap' : '') +
          (retries ? ` · ${retries} ${retries === 1 ? 'retry' : 'retries'}` : '');
        process.stderr.write(tty ? `\r\x1b[K${line}` : `${line}\n`);
      } else {
        writer.append({
          type: 'answer',
          answer: event.answer,
          reply: event.reply,
          promptTokens: usage.promptTokens,
          completionTokens: usage.completionTokens,
          ms: Math.round(event.ms),
          retries,
          committedAt: new Date().toISOString(),
        } satisfies JournalAnswer);
        say(`Read ${total} chunks in ${seconds(performance.now() - t0)}; every revision is in ${out}.`);
        if (!event.answer) say(`The reply gives no answer in the form ${header.prompts?.label ?? 'the prompts'} ask for; the whole reply follows.`);
        process.stdout.write(`${event.answer || event.reply}\n`);
      }
    }
    return 0;
  } catch (e) {
    const saved = `${step} of ${total} chunks are saved in ${out}`;
    if (isAbortError(e) && stop.signal.aborted) {
      say(`Stopped. ${saved}; run the same command with --resume to continue.`);
      return 130;
    }
    say(`${e instanceof Error ? e.message : String(e)}`);
    say(`${saved}; run the same command with --resume to continue from chunk ${step + 1}.`);
    return 1;
  } finally {
    process.off('SIGINT', onSigint);
    writer.close();
  }
}

// ---------------------------------------------------------------- eval

const EVAL_OPTIONS = {
  concurrency: { type: 'string' },
  data: { type: 'string', multiple: true },
  method: { type: 'string' },
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
} as const;

/** A book read as the app reads it; the generated essay where no book is given and the corpus is absent. */
async function loadHaystack(file: string | undefined): Promise<Haystack> {
  const path = file ?? DEFAULT_HAYSTACK;
  if (!file && !existsSync(path)) return generatedEssay();
  const { text } = await ingestBytes(basename(path), readFileBytes(path));
  return Haystack.fromText(basename(path), text);
}

async function evalCommand(argv: string[]): Promise<number> {
  const { values: v } = parse(argv, EVAL_OPTIONS);
  if (v.help) return help();
  if (v.data) return datasetEvalCommand(v);
  if (v.method !== undefined) throw new UsageError('--method goes with --data: the paper\'s method reads RULER-HotpotQA files.');
  const tasks = v.tasks ? v.tasks.split(',').map((t) => t.trim()).filter(Boolean) : [...TASK_IDS];
  const unknown = tasks.filter((t) => !isTaskId(t));
  if (unknown.length) throw new UsageError(`Unknown task ${unknown.join(', ')}. Tasks: ${TASK_IDS.join(', ')}.`);
  if (v.mode !== 'memory' && v.mode !== 'full') throw new UsageError(`--mode is memory or full, got "${v.mode}".`);
  let lengths: number[];
  try {
    lengths = parseLengths(v.lengths);
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
  const concurrency = wholeNumber('concurrency', v.concurrency, 1) ?? 8;
  const chunkTokens = wholeNumber('chunk', v.chunk, 1);
  const memoryTokens = wholeNumber('memory', v.memory, 1);
  const spec = sweepSpec({
    tasks: tasks as TaskId[],
    lengths,
    samples: wholeNumber('samples', v.samples, 1) ?? 5,
    seed: wholeNumber('seed', v.seed) ?? 0,
    mode: v.mode as ReadingMode,
    ...(chunkTokens !== undefined && { chunkTokens }),
    ...(memoryTokens !== undefined && { memoryTokens }),
  });
  const tty = process.stderr.isTTY;
  const say = (line: string) => process.stderr.write(`${tty ? '\r\x1b[K' : ''}${line}\n`);
  const essay = await loadHaystack(v.haystack);
  const { engine, config } = await openEngine(v, (n) => say(`  ${n.reason} Retrying in ${seconds(n.delayMs)}.`));
  const prompts = await choosePrompts(v, engine.id, say);
  spec.templates = { ...prompts.set.templates };
  const planned = planSweep(spec);
  process.stdout.write(
    `${describeEngine(engine)}; ${spec.mode === 'memory' ? `memory mode: chunk ${spec.chunkTokens}, memory ${spec.memoryTokens} tokens` : 'full context'}; ` +
      `${describePrompts(prompts.record)}; essay haystack ${essay.name}; ${planned.length} samples, ${concurrency} at a time.\n\n`,
  );

  const stop = new AbortController();
  const onSigint = () => stop.abort();
  process.once('SIGINT', onSigint);
  const results: SampleResult[] = [];
  const queue = [...planned];
  let failure: unknown;
  const t0 = performance.now();
  const ctx = { generator: engine, tokenizer: engine.tokenizer, contextWindow: engine.contextWindow, essay, signal: stop.signal };
  // N readers take samples off one queue: N requests in flight, which a batching server serves together.
  const reader = async () => {
    while (queue.length > 0 && !stop.signal.aborted) {
      const sample = queue.shift()!;
      try {
        const r = await runSample(spec, sample, ctx);
        results.push(r);
        const outcome = r.scores ? `score ${r.scores.score.toFixed(2)}` : 'skipped (too long for the engine)';
        say(`[${results.length}/${planned.length}] ${r.task} ${formatLength(r.length)} #${r.index + 1}: ${outcome}, ${seconds(r.chunkMs + r.answerMs)}`);
      } catch (e) {
        if (!stop.signal.aborted) failure = e;
        stop.abort();
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, planned.length) }, reader));
  process.off('SIGINT', onSigint);

  results.sort((a, b) => a.ordinal - b.ordinal);
  const cells = summarize(spec, results);
  process.stdout.write(formatTables(spec, cells));
  const tokens = results.reduce((n, r) => n + r.promptTokens + r.completionTokens, 0);
  const wall = (performance.now() - t0) / 1000;
  process.stdout.write(`\n${results.length} samples in ${wall.toFixed(1)} s: ${Math.round(tokens / wall).toLocaleString('en')} tokens/s through the engine.\n`);
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
    say(`Stopped by an error: ${failure instanceof Error ? failure.message : String(failure)}`);
    return 1;
  }
  if (stop.signal.aborted) {
    say('Stopped; the table shows the samples finished so far.');
    return 130;
  }
  return 0;
}

/** `eval --data`: dataset files by the paper's method (eval-data.ts). */
async function datasetEvalCommand(v: ReturnType<typeof parse<typeof EVAL_OPTIONS>>['values']): Promise<number> {
  const generated: string[] = (['tasks', 'haystack', 'csv', 'seed'] as const).filter((flag) => v[flag] !== undefined);
  if (v.mode !== 'memory') generated.push('mode');
  if (generated.length) throw new UsageError(`--${generated.join(', --')} ${generated.length === 1 ? 'is' : 'are'} for the generated tasks, not for --data.`);
  const tty = process.stderr.isTTY;
  const say = (line: string) => process.stderr.write(`${tty ? '\r\x1b[K' : ''}${line}\n`);
  try {
    const plan = planDatasetEval({
      data: v.data ?? [],
      method: v.method,
      prompts: await choosePrompts(v, engineIdOf(v), say),
      chunk: wholeNumber('chunk', v.chunk, 1),
      memory: wholeNumber('memory', v.memory, 1),
      samples: wholeNumber('samples', v.samples, 1),
      concurrency: wholeNumber('concurrency', v.concurrency, 1) ?? 8,
      json: v.json,
    });
    await checkDatasetFiles(plan);
    const { engine } = await openEngine(v, (n) => say(`  ${n.reason} Retrying in ${seconds(n.delayMs)}.`));
    return await runDatasetEval(plan, engine, {
      say,
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
  const fd = openSync(path, 'w');
  writeSync(fd, text);
  closeSync(fd);
}

// ---------------------------------------------------------------- main

function help(): number {
  process.stdout.write(HELP);
  return 0;
}

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command === 'read') return readCommand(rest);
  if (command === 'eval') return evalCommand(rest);
  if (command === undefined || command === 'help' || command === '--help' || command === '-h') return help();
  throw new UsageError(`Unknown command "${command}": use read or eval.`);
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (e: unknown) => {
    if (e instanceof UsageError) process.stderr.write(`${e.message}\nRun memagent --help for the options.\n`);
    else process.stderr.write(`${e instanceof Error ? e.message : String(e)}\n`);
    process.exit(e instanceof UsageError ? 2 : 1);
  },
);
