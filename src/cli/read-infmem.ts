/**
 * `memagent read <file> --method infmem`: a book read the InfMem way against
 * an OpenAI-compatible server's raw completions endpoint or WebLLM's on this
 * machine's GPU, with the official prompts read from the pinned files, every
 * request as InfMem's evaluation sends it. The answer goes to stdout, the
 * steps to stderr.
 */
import { isAbortError } from '../core/generation';
import type { ChatTextOptions } from '../core/infmem/chat-text';
import { type InfmemEvent, infmemLoop, type InfmemSteps, modelSteps } from '../core/infmem/loop';
import type { RawCompleter } from '../core/infmem/thinking';
import { DEFAULT_EARLY_STOP } from '../core/infmem/planner-state';
import { type InfmemDocument, prepareDocument } from '../core/infmem/retrieval';
import { extractiveInfmemSteps } from '../engines/extractive/infmem-steps';
import { openAIConfig } from '../engines/openai/http';
import { openRawCompletions } from '../engines/openai/completions';
import { loadQwenTokenizer, type QwenTokenizer } from '../engines/qwen-tokenizer';
import { chatFamilyOf, type ModelEntry } from '../engines/webllm/models/models';
import { QWEN25_DEFAULT_SYSTEM } from '../engines/webllm/models/system-message';
import { seconds } from './engine';
import { describeGpuEngine, type GpuFlags, loadGpuEngine, openGpuEngine } from './gpu-engine';
import { parseFlags, UsageError, wholeNumber } from './flags';
import { type InfmemFileEnvironment, resolveInfmemPrompts } from './infmem-files';
import { readFiles } from './read-set';

export type ReadMethod = 'memagent' | 'infmem';

/**
 * The reading method `--method` names (MemAgent's unless given), and the
 * arguments without it for MemAgent's read, which has no such flag.
 */
export function readMethodOf(argv: readonly string[]): { method: ReadMethod; rest: string[] } {
  const rest: string[] = [];
  let method: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--') {
      rest.push(...argv.slice(i));
      break;
    }
    if (a === '--method') method = argv[++i] ?? '';
    else if (a.startsWith('--method=')) method = a.slice('--method='.length);
    else rest.push(a);
  }
  if (method !== undefined && method !== 'memagent' && method !== 'infmem') {
    throw new UsageError(`--method is memagent (the default) or infmem, not "${method}".`);
  }
  return { method: (method ?? 'memagent') as ReadMethod, rest };
}

const INFMEM_OPTIONS = {
  question: { type: 'string', short: 'q' },
  method: { type: 'string' },
  'early-stop': { type: 'string' },
  thinking: { type: 'string' },
  'fncall-file': { type: 'string' },
  'fncall-base': { type: 'string' },
  'keep-gutenberg': { type: 'boolean' },
  json: { type: 'boolean' },
} as const;

/** Flags of MemAgent's read that InfMem's official settings fix, refused rather than ignored. */
const FIXED: readonly [string, string][] = [
  ['chunk', 'InfMem reads chunks of 5,000 tokens with units of 500, as its evaluation does'],
  ['memory', 'InfMem gives each thought and each reply 1,024 tokens, as its evaluation does'],
  ['prompts', 'InfMem reads its prompts from its own file; give a copy with --prompts-file'],
  ['context', 'InfMem sends the whole prompt, as its evaluation does'],
];

function thinkingOf(value: string | undefined): boolean {
  if (value === undefined || value === 'on') return true;
  if (value === 'off') return false;
  throw new UsageError(`--thinking is on (the default, as InfMem's evaluation runs) or off, not "${value}".`);
}

function unitNumber(flag: string, value: string | undefined, fallback: number, max?: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n) || n < 0 || (max !== undefined && n > max)) {
    throw new UsageError(`--${flag} must be a number from 0${max !== undefined ? ` to ${max}` : ''}, got "${value}".`);
  }
  return n;
}

/** What InfMem needs of a WebLLM engine: its model, its raw completions, and a load with the window a request needs. */
export interface InfmemGpuEngine {
  model: ModelEntry;
  completer?: RawCompleter;
  /** The system message its chat requests carry (the model's own default), for Qwen2.5's chat text. */
  systemMessage?: string | undefined;
  prepare?(contextTokens: number): Promise<void>;
}

export interface InfmemCliEnvironment extends InfmemFileEnvironment {
  stdout?: NodeJS.WritableStream;
  stderr?: NodeJS.WritableStream;
  /** Opens `--engine webllm`'s engine: on this machine's GPU through Dawn unless given. */
  openGpu?: (flags: GpuFlags, say: (line: string) => void) => Promise<InfmemGpuEngine>;
}

/**
 * The window WebLLM is loaded with before the first request: a writer's
 * request holds a 5,000-token chunk, four retrieved units of up to 500, the
 * memory and the history, then up to 1,024 tokens of thought and 1,024 of
 * reply. A longer request reloads the model with a larger window.
 */
export const INFMEM_WEBLLM_WINDOW = 12_288;

/** Flags that only --engine webllm reads. */
const WEBLLM_ONLY = ['model-url', 'model-lib', 'cache-dir', 'webllm'] as const;

/** The read's flags, checked before the book is read or a server asked. */
function checkedFlags(argv: string[]) {
  const { values: v, positionals } = parseFlags(argv, INFMEM_OPTIONS);
  for (const [flag, why] of FIXED) if (v[flag as keyof typeof v] !== undefined) throw new UsageError(`--${flag} does not go with --method infmem: ${why}.`);
  if (!positionals[0]) throw new UsageError('Name the file to read: memagent read <file> --method infmem --question "..." --base-url URL');
  const engine = v.engine === 'extractive' || v.engine === 'webllm' ? v.engine : v.engine === undefined ? 'server' : undefined;
  if (!engine) {
    const why = v.engine === 'wllama' ? ' (wllama runs in the browser only)' : '';
    throw new UsageError(`--method infmem reads with a server (--base-url), --engine webllm or --engine extractive, not --engine ${v.engine}${why}.`);
  }
  if (engine === 'server' && !v['base-url'])
    throw new UsageError(
      '--method infmem needs --base-url, the address of an OpenAI-compatible server that answers /v1/completions (vLLM does), --engine webllm to run a model on this machine’s GPU, or --engine extractive (fixed rules, no model).',
    );
  if (engine !== 'server' && v['base-url']) throw new UsageError(`--engine ${engine} reads without a server: leave out --base-url.`);
  if (engine !== 'webllm') for (const flag of WEBLLM_ONLY) if (v[flag] !== undefined) throw new UsageError(`--${flag} is for --engine webllm.`);
  if (v.speculate !== undefined)
    throw new UsageError("--speculate does not go with --method infmem: InfMem's raw completions are written by WebLLM's own decoding.");
  const question = v.question ?? '';
  if (!question.trim()) throw new UsageError('Give the question with --question "...": the planner and the memory work towards it.');
  return {
    v,
    engine,
    files: positionals,
    question,
    earlyStop: wholeNumber('early-stop', v['early-stop'], 1) ?? DEFAULT_EARLY_STOP,
    thinking: thinkingOf(v.thinking),
    temperature: unitNumber('temperature', v.temperature, 0),
    topP: unitNumber('top-p', v['top-p'], 1, 1),
  };
}

/** The server's raw completions, with the retry flags. */
async function openServer(v: Flags['v'], fetchImpl: typeof fetch | undefined, say: (line: string) => void) {
  const retries = wholeNumber('retries', v.retries);
  const delay = wholeNumber('retry-delay', v['retry-delay']);
  const config = openAIConfig(
    { baseUrl: v['base-url']!, ...(v.model && { model: v.model }) },
    v['api-key'] ?? process.env.MEMAGENT_API_KEY ?? process.env.OPENAI_API_KEY,
  );
  return openRawCompletions(config, {
    ...(fetchImpl && { fetch: fetchImpl }),
    retry: { ...(retries !== undefined && { maxRetries: retries }), ...(delay !== undefined && { baseDelayMs: delay }) },
    onRetry: (n) => say(`  ${n.reason} Retrying in ${seconds(n.delayMs)} (retry ${n.attempt}).`),
    onChatFallback: say,
  });
}

/** One step of the read in words, on stderr. */
function report(e: InfmemEvent, { total, earlyStop, say }: { total: number; earlyStop: number; say: (line: string) => void }): void {
  if (e.kind === 'plan') {
    const asked = e.retrievals.map((r) => `${JSON.stringify(r.query)}${r.fallback ? ` (the question: ${r.fallback})` : ''}`).join(', ');
    // A reply without STOP votes only when it holds no call at all; a call to another tool retrieves nothing.
    const what =
      e.stop || e.votes > 0
        ? `planner voted to stop (${e.votes} of ${earlyStop} in a row)`
        : asked
          ? `planner searched ${asked}`
          : 'planner called no search tool';
    say(`chunk ${e.index + 1} of ${total}: ${what}`);
    if (e.ends) say(`Stopped before chunk ${e.index + 1}: ${earlyStop} votes in a row. Answering from the memory.`);
  } else if (e.kind === 'write') {
    say(
      `chunk ${e.index + 1} of ${total}: memory written (${e.memory.length.toLocaleString('en')} characters${e.units.length ? `, with ${e.units.length} retrieved units` : ''})`,
    );
  } else if (!e.answer) {
    say('The reply gives no answer in the form "the answer is …"; the whole reply follows.');
  }
}

/** What the read's steps come from: the extractive engine's rules, or a model through the official prompts. */
interface StepsReader {
  about: string;
  steps(signal: AbortSignal): InfmemSteps;
  /** Said after the read's time: the requests it sent, where it sent any. */
  requests(): string;
}

function extractiveReader(document: InfmemDocument, tokenizer: QwenTokenizer): StepsReader {
  return {
    about: 'the extractive engine (fixed rules, no model: a stand-in for the planner and writer)',
    steps: () => extractiveInfmemSteps(document, tokenizer),
    requests: () => '',
  };
}

/** A model's raw completions, the chat text it was trained on, and how the read names it. */
interface Completions {
  completer: RawCompleter;
  chat: Pick<ChatTextOptions, 'family' | 'defaultSystem'>;
  about: string;
  requests(): string;
}

async function serverCompletions(v: Flags['v'], environment: InfmemCliEnvironment, say: (line: string) => void): Promise<Completions> {
  const server = await openServer(v, environment.fetch, say);
  return {
    completer: server.completer,
    // InfMem's released models are Qwen3s.
    chat: { family: 'qwen3' },
    about: `${server.model} at ${server.baseUrl}`,
    requests: () =>
      ` with ${server.stats.requests.toLocaleString('en')} requests${server.stats.endpoint === 'chat' ? ' to the chat endpoint (not raw completions)' : ''}`,
  };
}

/** WebLLM on this machine's GPU: the model's own chat family (a Qwen3 library means Qwen3's), loaded before the first request. */
async function webllmCompletions(v: Flags['v'], environment: InfmemCliEnvironment, say: (line: string) => void): Promise<Completions> {
  const engine = await (environment.openGpu ?? openGpuEngine)(v, say);
  const own = engine.completer;
  if (!own) throw new Error(`${engine.model.label} cannot continue a prompt as it is (no raw completions in this WebLLM build).`);
  const family = chatFamilyOf(engine.model);
  // A Qwen2.5 model's chat text opens with its default system message when a request has none.
  const chat = family === 'qwen3' ? { family } : { family, defaultSystem: engine.systemMessage || QWEN25_DEFAULT_SYSTEM };
  await loadGpuEngine(engine, INFMEM_WEBLLM_WINDOW, say);
  let sent = 0;
  return {
    completer: {
      complete: (request) => {
        sent++;
        return own.complete(request);
      },
    },
    chat,
    about: `${describeGpuEngine(engine) ?? `model ${engine.model.label} on WebLLM`}, ${family === 'qwen3' ? 'Qwen3' : 'Qwen2.5'} chat text`,
    requests: () => ` with ${sent.toLocaleString('en')} requests`,
  };
}

type Flags = ReturnType<typeof checkedFlags>;

async function modelReader(flags: Flags, environment: InfmemCliEnvironment, say: (line: string) => void): Promise<StepsReader> {
  const { v, thinking, temperature, topP } = flags;
  const prompts = await resolveInfmemPrompts(v, environment);
  const model = flags.engine === 'webllm' ? await webllmCompletions(v, environment, say) : await serverCompletions(v, environment, say);
  return {
    about: `thinking ${thinking ? 'on' : 'off'}; ${model.about}; prompts: ${prompts.sources.infmem}, function calls: ${prompts.sources.fncall}`,
    steps: (signal) => modelSteps({ ...prompts, completer: model.completer, chat: model.chat, thinking, temperature, topP, signal }),
    requests: model.requests,
  };
}

export async function readInfmemCommand(argv: string[], printHelp: () => number, environment: InfmemCliEnvironment = {}): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h')) return printHelp();
  const flags = checkedFlags(argv);
  const { v, files, question, earlyStop } = flags;
  const stdout = environment.stdout ?? process.stdout;
  const stderr = environment.stderr ?? process.stderr;
  const say = (line: string) => v.quiet || stderr.write(`${line}\n`);
  const doc = await readFiles(files, { stripGutenberg: !v['keep-gutenberg'] });
  const tokenizer = await loadQwenTokenizer();
  const document = prepareDocument(doc.text, tokenizer);
  const total = document.chunks.length;
  const reader = flags.engine === 'extractive' ? extractiveReader(document, tokenizer) : await modelReader(flags, environment, say);
  say(
    `${doc.name}: ${total.toLocaleString('en')} chunks of up to 5,000 tokens, ${document.units.length.toLocaleString('en')} retrieval units; InfMem, early stop ${earlyStop}; ${reader.about}.`,
  );
  const stop = new AbortController();
  const onSigint = () => stop.abort();
  process.once('SIGINT', onSigint);
  const t0 = performance.now();
  try {
    const loop = infmemLoop({ document, question, steps: reader.steps(stop.signal), earlyStop, signal: stop.signal });
    for await (const e of loop) {
      report(e, { total, earlyStop, say });
      if (e.kind === 'answer') {
        say(`Read ${e.step.toLocaleString('en')} of ${total.toLocaleString('en')} chunks in ${seconds(performance.now() - t0)}${reader.requests()}.`);
        stdout.write(
          v.json
            ? `${JSON.stringify({ type: 'answer', question, answer: e.answer, final: e.final, step: e.step, chunks: total })}\n`
            : `${e.answer || e.final}\n`,
        );
      }
    }
    return 0;
  } catch (e) {
    if (isAbortError(e) && stop.signal.aborted) {
      stderr.write('Stopped.\n');
      return 130;
    }
    stderr.write(`${e instanceof Error ? e.message : String(e)}\n`);
    return 1;
  } finally {
    process.off('SIGINT', onSigint);
  }
}
