/**
 * `memagent read <file> --method infmem`: a book read the InfMem way against
 * an OpenAI-compatible server's raw completions endpoint or WebLLM's on this
 * machine's GPU, with the official prompts read from the pinned files, every
 * request as InfMem's evaluation sends it; or by the extractive engine's
 * stand-ins. One question or several, each journaled chunk by chunk with the
 * planner's state, so that `--resume` goes on where a read stopped. The
 * answers go to stdout, the steps to stderr.
 */
import { existsSync, statSync } from 'node:fs';
import { DEFAULT_EARLY_STOP } from '../core/infmem/planner-state';
import { type InfmemDocument, prepareDocument } from '../core/infmem/retrieval';
import { loadQwenTokenizer } from '../engines/qwen-tokenizer';
import { REQUESTS_AT_ONCE } from '../engines/openai/info';
import { requestsAtOnceOf } from './engine';
import { parseFlags, UsageError, wholeNumber } from './flags';
import {
  checkInfmemResume,
  checkSameModel,
  familyName,
  type GivenSettings,
  type InfmemChat,
  type InfmemJournal,
  type InfmemJournalHeader,
  INFMEM_JOURNAL_VERSION,
  type InfmemReadSettings,
  readInfmemJournal,
  settingsFor,
} from './infmem-journal';
import { type InfmemQuestion, readInfmemQuestions } from './infmem-questions';
import { InfmemSources } from './infmem-sources';
import { Progress, progressMode, type ProgressStream } from './progress';
import { extractiveReader, type InfmemReaderEnvironment, modelReader, type StepsReader } from './infmem-readers';
import { INFMEM_JOURNAL_FORMAT } from './journal';
import { questionJournalsOf } from './question-journals';
import { gatherQuestions, questionJournal } from './questions';
import { readFiles, type ReadText } from './read-set';

export { type InfmemGpuEngine, INFMEM_WEBLLM_WINDOW } from './infmem-readers';

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
  question: { type: 'string', short: 'q', multiple: true },
  'questions-file': { type: 'string' },
  out: { type: 'string', short: 'o' },
  resume: { type: 'boolean' },
  force: { type: 'boolean' },
  'in-flight': { type: 'string' },
  method: { type: 'string' },
  'early-stop': { type: 'string' },
  thinking: { type: 'string' },
  chat: { type: 'string' },
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

/** The settings of a new read where no flag says otherwise: those of InfMem's HotpotQA evaluation. */
const DEFAULTS: InfmemReadSettings = { earlyStop: DEFAULT_EARLY_STOP, thinking: true, temperature: 0, topP: 1 };

function thinkingOf(value: string | undefined): boolean | undefined {
  if (value === undefined) return undefined;
  if (value === 'on') return true;
  if (value === 'off') return false;
  throw new UsageError(`--thinking is on (the default, as InfMem's evaluation runs) or off, not "${value}".`);
}

function unitNumber(flag: string, value: string | undefined, max?: number): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n) || n < 0 || (max !== undefined && n > max)) {
    throw new UsageError(`--${flag} must be a number from 0${max !== undefined ? ` to ${max}` : ''}, got "${value}".`);
  }
  return n;
}

function chatFlag(value: string | undefined, engine: 'server' | 'webllm' | 'extractive'): InfmemChat['family'] | undefined {
  if (value === undefined) return undefined;
  if (engine === 'webllm')
    throw new UsageError("--chat is for a server: with --engine webllm the chat text is the model's own family's (Qwen3 for a Qwen3 library, else Qwen2.5).");
  if (engine === 'extractive') throw new UsageError('--chat is for a server: the extractive engine renders no chat text.');
  if (value !== 'qwen3' && value !== 'qwen2.5')
    throw new UsageError(`--chat is qwen3 (the default, as InfMem's official code renders its requests) or qwen2.5, not "${value}".`);
  return value;
}

export interface InfmemCliEnvironment extends InfmemReaderEnvironment {
  stdout?: NodeJS.WritableStream;
  /** Where progress and messages go: a terminal gets the redrawn lines. */
  stderr?: ProgressStream;
}

/** Flags that only --engine webllm reads. */
const WEBLLM_ONLY = ['model-url', 'model-lib', 'cache-dir', 'webllm'] as const;

function engineOf(v: Flags['v']): 'server' | 'webllm' | 'extractive' {
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
  if (engine !== 'server' && v['in-flight'] !== undefined) throw new UsageError('--in-flight is for a server (--base-url).');
  return engine;
}

/** The read's flags, checked before the book is read or a server asked. */
function checkedFlags(argv: string[]) {
  const { values: v, positionals } = parseArgs(argv);
  for (const [flag, why] of FIXED) if (v[flag as keyof typeof v] !== undefined) throw new UsageError(`--${flag} does not go with --method infmem: ${why}.`);
  if (!positionals[0]) throw new UsageError('Name the file to read: memagent read <file> --method infmem --question "..." --base-url URL');
  const engine = engineOf(v);
  if (v.speculate !== undefined)
    throw new UsageError("--speculate does not go with --method infmem: InfMem's raw completions are written by WebLLM's own decoding.");
  const questions = gatherQuestions(v);
  if ((!v.resume && questions.length === 0) || (questions.length === 1 && !questions[0]))
    throw new UsageError('Give the question with --question "...": the planner and the memory work towards it.');
  const given: GivenSettings = {
    earlyStop: wholeNumber('early-stop', v['early-stop'], 1),
    thinking: thinkingOf(v.thinking),
    temperature: unitNumber('temperature', v.temperature),
    topP: unitNumber('top-p', v['top-p'], 1),
  };
  const out = v.out ?? `${positionals[0]}.infmem.jsonl`;
  return { v, engine, files: positionals, questions, given, out, chat: chatFlag(v.chat, engine), inFlight: requestsAtOnceOf(v['in-flight']) };
}

function parseArgs(argv: string[]) {
  return parseFlags(argv, INFMEM_OPTIONS);
}

type Flags = ReturnType<typeof checkedFlags>;

/** One question's journal to continue (null: a new read), and its question. */
interface Start {
  path: string;
  journal: InfmemJournal | null;
  question: string;
}

/** What the read continues or begins: each question's journal path, and the journals a --resume goes on from. */
function startsOf(flags: Flags, { doc, document, say }: { doc: ReadText; document: InfmemDocument; say: (line: string) => void }): Start[] {
  const { v, out, questions } = flags;
  const file = flags.files[0]!;
  const counts = { hash: doc.hash, chunks: document.chunks.length, units: document.units.length };
  const several = questions.length > 1 || (v.resume === true && !existsSync(out) && existsSync(questionJournal(out, 1)));
  if (several) {
    const { paths, journals } = questionJournalsOf(
      out,
      questions,
      { v, say },
      {
        read: readInfmemJournal,
        question: (j) => j.header.question,
        check: (j, path) => checkInfmemResume(j, { path, file, document: counts, question: undefined }),
        together: ({ header: h }) => JSON.stringify([h.createdAt, h.document.hash, h.engine, h.settings, h.chat, h.files, h.chunks, h.units]),
      },
    );
    return paths.map((path, i) => ({ path, journal: journals?.[i] ?? null, question: journals?.[i]?.header.question ?? questions[i]! }));
  }
  let journal: InfmemJournal | null = null;
  if (v.resume && existsSync(out)) {
    journal = readInfmemJournal(out);
    checkInfmemResume(journal, { path: out, file, document: counts, question: questions[0] });
  } else if (!v.resume && !v.force && existsSync(out) && statSync(out).size > 0) {
    throw new UsageError(`${out} already holds a read. Continue it with --resume, start over with --force, or choose another --out.`);
  }
  if (v.resume && !journal) {
    const where = `neither ${out} nor ${questionJournal(out, 1)} (a read of several questions) is there`;
    if (!questions[0])
      throw new UsageError(`--resume has no journal to continue: ${where}. Name the journal with --out FILE, or give --question "..." to start a new read.`);
    say(`--resume: there is no journal to continue (${where}), so this read starts at the first chunk.`);
  }
  return [{ path: out, journal, question: questions[0] ?? journal!.header.question }];
}

/** Each question of the read: its journal's header, or a new one for a new read. */
function questionsOf(starts: Start[], read: { doc: ReadText; document: InfmemDocument; reader: StepsReader; settings: InfmemReadSettings }): InfmemQuestion[] {
  const { doc, document, reader, settings } = read;
  const createdAt = new Date().toISOString();
  return starts.map(({ path, journal, question }, i) => {
    const header: InfmemJournalHeader = journal?.header ?? {
      type: INFMEM_JOURNAL_FORMAT,
      version: INFMEM_JOURNAL_VERSION,
      document: { name: doc.name, hash: doc.hash, chars: doc.text.length, ...(doc.books && { books: doc.books }) },
      question,
      engine: reader.identity,
      settings,
      ...(reader.chat && { chat: reader.chat }),
      ...(reader.files && { files: reader.files }),
      chunks: document.chunks.length,
      units: document.units.length,
      createdAt,
    };
    return { n: i + 1, path, header, journal, step: journal?.revisions.length ?? 0 };
  });
}

export async function readInfmemCommand(argv: string[], printHelp: () => number, environment: InfmemCliEnvironment = {}): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h')) return printHelp();
  const flags = checkedFlags(argv);
  const { v } = flags;
  const stdout = environment.stdout ?? process.stdout;
  const stderr = environment.stderr ?? process.stderr;
  // On a terminal, one line per question redrawn in place; piped (or --progress lines), a line per step.
  const progress = new Progress(progressMode(v, stderr), stderr);
  const say = progress.say;
  const doc = await readFiles(flags.files, { stripGutenberg: !v['keep-gutenberg'] });
  const tokenizer = await loadQwenTokenizer();
  const document = prepareDocument(doc.text, tokenizer);
  const starts = startsOf(flags, { doc, document, say });
  const kept = starts.find((s) => s.journal);
  const settings = settingsFor(flags.given, DEFAULTS, kept && { path: kept.path, settings: kept.journal!.header.settings });
  const keptChat = kept?.journal!.header.chat;
  if (flags.chat && keptChat && flags.chat !== keptChat.family)
    throw new UsageError(`${kept!.path} was read in ${familyName(keptChat.family)}'s chat text; a resume keeps it. Drop --chat, or start over with --force.`);
  const atOnce = starts.length > 1 ? (flags.inFlight ?? REQUESTS_AT_ONCE.default) : undefined;
  const family = flags.chat ?? keptChat?.family;
  const reader =
    flags.engine === 'extractive'
      ? extractiveReader(document, tokenizer)
      : await modelReader(v, environment, say, { settings, ...(family && { family }), ...(atOnce && { atOnce }) });
  for (const s of starts) if (s.journal) checkSameModel(s.journal, reader, { path: s.path, force: v.force === true });
  const total = document.chunks.length;
  say(
    `${doc.name}: ${total.toLocaleString('en')} chunks of up to 5,000 tokens, ${document.units.length.toLocaleString('en')} retrieval units; InfMem, early stop ${settings.earlyStop}; ${reader.about}.`,
  );
  if (starts.length > 1) {
    say(`${starts.length} questions, each read on its own with its planner and journal: ${starts[0]!.path} to ${starts.at(-1)!.path}.`);
    if (atOnce !== undefined && atOnce < starts.length)
      say(`At most ${atOnce} of the questions' requests are in flight at once (--in-flight); the others wait their turn.`);
  }
  return readInfmemQuestions({
    document,
    questions: questionsOf(starts, { doc, document, reader, settings }),
    steps: (signal) => reader.steps(signal),
    requests: () => reader.requests(),
    sources: new InfmemSources(doc, document),
    json: v.json === true,
    progress,
    write: (text) => stdout.write(text),
  });
}
