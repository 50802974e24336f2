/**
 * `memagent read <file>`: a whole book read by the memory loop, every
 * revision journaled (journal.ts) so that a read stopped anywhere resumes.
 */
import { existsSync, statSync } from 'node:fs';
import { isAbortError } from '../core/generation';
import type { Engine } from '../engines/engine';
import type { ChunkSpan } from '../core/chunker';
import { type AnswerEvent, memoryLoop, type RevisionEvent } from '../core/loop';
import { readSettings } from '../core/plan';
import { parseFlags, settingsFlags, UsageError } from './flags';
import { readFiles, type ReadText } from './read-set';
import { describeEngine, describePrompts, engineConfigOf, openEngine, seconds } from './engine';
import { loadGpuEngine } from './gpu-engine';
import { answerLine, type Journal, type JournalHeader, journalLoop, JournalWriter, readJournal, revisionLine } from './journal';
import { Progress, progressMode } from './progress';
import { promptSetName } from './prompts';
import { gatherQuestions, questionJournal } from './questions';
import { readQuestions } from './read-questions';
import { checkResume, chunksOf, engineIdentity, newHeaders, refuseOtherModel } from './read-start';
import { formatSources, type ReadSources, traceRead } from './sources';
import { whole } from './numbers';
import { abortOnCtrlC } from './ctrl-c';

/** read's own flags; the server, prompt and settings flags are common (flags.ts). */
const READ_OPTIONS = {
  question: { type: 'string', short: 'q', multiple: true },
  'questions-file': { type: 'string' },
  out: { type: 'string', short: 'o' },
  resume: { type: 'boolean' },
  force: { type: 'boolean' },
  seed: { type: 'string' },
  'keep-gutenberg': { type: 'boolean' },
  json: { type: 'boolean' },
  'in-flight': { type: 'string' },
} as const;

type ReadFlags = ReturnType<typeof parseFlags<typeof READ_OPTIONS>>['values'];

export async function readCommand(argv: string[], printHelp: () => number): Promise<number> {
  const { values: v, positionals } = parseFlags(argv, READ_OPTIONS);
  if (v.help) return printHelp();
  const asked = checkAsked(v, positionals);
  const { file, out, settings, progress, questions } = asked;
  const say = progress.say;
  const doc = await readFiles(positionals, { stripGutenberg: !v['keep-gutenberg'] });
  if (asked.several) return readQuestions({ v, file, out, doc, settings, progress, questions });
  const { journal, question } = journalToContinue(asked, doc, v);
  // Chunks read before this run: a resume says how many it read itself.
  const at = { before: journal?.revisions.length ?? 0, step: journal?.revisions.length ?? 0 };
  const { engine } = await openEngine(v, (n) => say(`  step ${at.step + 1}: ${n.reason} Retrying in ${seconds(n.delayMs)} (retry ${n.attempt}).`), say);
  if (journal) refuseOtherModel(journal.header.engine, engineIdentity(engine), { out, force: v.force === true });
  const { headers, chunks } = journal
    ? { headers: [journal.header], chunks: chunksOf(journal.header) }
    : await newHeaders([question], { v, engine, doc, settings, say });
  // Every revision's memory, for tracing the answer's sources through them.
  const memories = journal?.revisions.map((r) => r.memory) ?? [];
  const read: OneRead = { v, out, doc, header: headers[0]!, chunks, journal, engine, progress, memories, at };
  if (journal?.answer) return printFinished(read, journal.answer);
  introduce(read);
  // An engine whose window is set at load (WebLLM) loads with the room the plan needs.
  await loadGpuEngine(engine, read.header.settings.contextTokens, say);
  return readChunks(read);
}

/** What the command line asks for, checked before the book is read or a server asked: a mistake is said at once. */
function checkAsked(v: ReadFlags, positionals: string[]) {
  const file = positionals[0];
  if (!file) throw new UsageError('Name the file to read: memagent read <file> --question "..."');
  if (!existsSync(file)) throw new UsageError(`There is no file ${file}.`);
  // Several files are read as one set, in the order given (read-set.ts).
  const out = v.out ?? `${file}.memagent.jsonl`;
  const settings = readSettings(settingsFlags(v, { seed: true }));
  engineConfigOf(v);
  const progress = new Progress(progressMode(v, process.stderr), process.stderr);
  const questions = gatherQuestions(v);
  // Several questions, or a resume that finds the numbered journals of several: one journal each.
  const several = questions.length > 1 || (v.resume === true && !existsSync(out) && existsSync(questionJournal(out, 1)));
  return { file, out, settings, progress, questions, several };
}

/** The journal a --resume continues (checked against the book and question), or none for a new read; and the question read. */
function journalToContinue(asked: ReturnType<typeof checkAsked>, doc: ReadText, v: ReadFlags): { journal: Journal | null; question: string } {
  const { out, file, questions } = asked;
  let journal: Journal | null = null;
  if (v.resume && existsSync(out)) {
    journal = readJournal(out);
    checkResume(journal, { out, doc, file, question: questions[0], v });
  } else if (!v.resume && !v.force && existsSync(out) && statSync(out).size > 0) {
    throw new UsageError(`${out} already holds a read. Continue it with --resume, start over with --force, or choose another --out.`);
  }
  if (v.resume && !journal) noJournal(out, questions[0] !== undefined, asked.progress.say);
  const question = questions[0] ?? journal?.header.question ?? '';
  if (!question) throw new UsageError('Give the question with --question "...": the memory keeps what helps answer it.');
  return { journal, question };
}

/** One question's read, as its parts below take it. */
interface OneRead {
  v: ReadFlags;
  out: string;
  doc: ReadText;
  header: JournalHeader;
  chunks: ChunkSpan[];
  journal: Journal | null;
  engine: Engine;
  progress: Progress;
  /** Every revision's memory so far, for tracing the answer's sources through them. */
  memories: string[];
  /** Chunks read before this run, and the chunks read so far (the retry notice names the step). */
  at: { before: number; step: number };
}

/** The answer on stdout, then its sources: in words, or with --json as one JSON line. */
function printAnswer(read: OneRead, answer: string, sources: ReadSources): void {
  process.stdout.write(
    read.v.json
      ? `${JSON.stringify({ type: 'answer', question: read.header.question, answer, sources })}\n`
      : `${answer}\n${formatSources(sources, read.chunks.length)}`,
  );
}

/** A journal whose read is finished: its answer again, with its sources (traced now where the journal lacks them). */
async function printFinished(read: OneRead, finished: NonNullable<Journal['answer']>): Promise<number> {
  const { doc, header, chunks, memories } = read;
  read.progress.say(`${read.out} is a finished read: every chunk is read and answered.`);
  const answer = finished.answer || finished.reply;
  printAnswer(read, answer, finished.sources ?? (await traceRead(doc, { question: header.question, chunks, memories, answer })));
  return 0;
}

/** The line that says what is read and how, and where a resume starts. */
function introduce({ doc, chunks, header, engine, journal, out, at, progress }: OneRead): void {
  const tokens = chunks.reduce((n, c) => n + c.tokens, 0);
  const total = chunks.length;
  progress.say(
    `${doc.name}: ${tokens.toLocaleString('en')} tokens in ${whole(total)} chunks of up to ${header.settings.chunkTokens.toLocaleString('en')}, ` +
      `memory ${header.settings.memoryTokens.toLocaleString('en')} tokens; ${describeEngine(engine)}` +
      `${header.prompts ? `; ${describePrompts(header.prompts)}` : ''}.`,
  );
  if (journal) progress.say(`Resuming at chunk ${whole(at.step + 1)} of ${whole(total)}: ${whole(at.step)} already in ${out}.`);
}

/** Reads the chunks left and answers, each revision journaled as it is written. Returns the exit code. */
async function readChunks(read: OneRead): Promise<number> {
  const { doc, header, chunks, journal, engine, progress, at, out } = read;
  const total = chunks.length;
  const writer = new JournalWriter(out, !journal, journal?.validBytes);
  if (!journal) writer.append(header);
  const stop = abortOnCtrlC();
  const t0 = performance.now();
  progress.begin();
  try {
    const loop = memoryLoop(journalLoop(header, journal, { text: doc.text, chunks, generator: engine, nextChunk: at.step, signal: stop.signal }));
    for await (const event of loop) {
      if (event.kind === 'revision') writeRevision(read, event, writer);
      else await writeAnswer(read, event, { writer, ms: performance.now() - t0 });
    }
    return 0;
  } catch (e) {
    const saved = `${whole(at.step)} of ${whole(total)} chunks are saved in ${out}`;
    if (isAbortError(e) && stop.signal.aborted) {
      progress.error(`Stopped. ${saved}; run the same command with --resume to continue.`);
      return 130;
    }
    progress.error(`${e instanceof Error ? e.message : String(e)}`);
    progress.error(`${saved}; run the same command with --resume to continue from chunk ${whole(at.step + 1)}.`);
    return 1;
  } finally {
    stop.release();
    writer.close();
  }
}

/** A new memory: journaled, kept for tracing, and shown on the progress line. */
function writeRevision(read: OneRead, event: RevisionEvent, writer: JournalWriter): void {
  const { chunks, memories, engine, progress, doc, at } = read;
  const { usage } = event.result;
  const span = chunks[event.index]!;
  memories[event.index] = event.memory;
  const line = revisionLine(event, span, engine.tokenizer.count(event.memory));
  writer.append(line);
  at.step = event.index + 1;
  progress.readStep({
    chunk: at.step,
    total: chunks.length,
    memoryTokens: line.memoryTokens,
    ms: event.ms,
    promptTokens: usage.promptTokens,
    completionTokens: usage.completionTokens,
    cut: event.result.finishReason === 'length',
    retries: line.retries,
    place: doc.placeAt?.(span.start),
  });
}

/** The answer: journaled with its sources, the read summed up on stderr, the answer on stdout. */
async function writeAnswer(read: OneRead, event: AnswerEvent, done: { writer: JournalWriter; ms: number }): Promise<void> {
  const { doc, header, chunks, memories, progress, at, out } = read;
  const total = chunks.length;
  const sources = await traceRead(doc, { question: header.question, chunks, memories, answer: event.answer || event.reply });
  done.writer.append(answerLine(event, header, sources));
  progress.done();
  const what = at.before ? `the last ${whole(total - at.before)} of ${whole(total)} chunks (${whole(at.before)} were read before)` : `${whole(total)} chunks`;
  progress.say(`Read ${what} in ${seconds(done.ms)}; every revision is in ${out}.`);
  if (!event.answer)
    progress.say(
      `The reply gives no answer in the form the prompts${header.prompts ? ` (${promptSetName(header.prompts)})` : ''} ask for; the whole reply follows.`,
    );
  printAnswer(read, event.answer || event.reply, sources);
}

/** A --resume with no journal to continue: a new read where a question is given (said so), else nothing to do. */
function noJournal(out: string, asked: boolean, say: (line: string) => void): void {
  const where = `neither ${out} nor ${questionJournal(out, 1)} (a read of several questions) is there`;
  if (!asked)
    throw new UsageError(`--resume has no journal to continue: ${where}. Name the journal with --out FILE, or give --question "..." to start a new read.`);
  say(`--resume: there is no journal to continue (${where}), so this read starts at the first chunk.`);
}
