/**
 * `memagent read <file>`: a whole book read by the memory loop, every
 * revision journaled (journal.ts) so that a read stopped anywhere resumes.
 */
import { existsSync, statSync } from 'node:fs';
import { isAbortError } from '../core/generation';
import { memoryLoop } from '../core/loop';
import { readSettings } from '../core/plan';
import { parseFlags, settingsFlags, UsageError } from './flags';
import { readFiles } from './read-set';
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

export async function readCommand(argv: string[], printHelp: () => number): Promise<number> {
  const { values: v, positionals } = parseFlags(argv, READ_OPTIONS);
  if (v.help) return printHelp();
  const file = positionals[0];
  if (!file) throw new UsageError('Name the file to read: memagent read <file> --question "..."');
  if (!existsSync(file)) throw new UsageError(`There is no file ${file}.`);
  // Several files are read as one set, in the order given (read-set.ts).
  const out = v.out ?? `${file}.memagent.jsonl`;
  // Checked before the book is read or a server asked: a mistake is said at once.
  const settings = readSettings(settingsFlags(v, { seed: true }));
  engineConfigOf(v);
  const progress = new Progress(progressMode(v, process.stderr), process.stderr);
  const say = progress.say;
  const questions = gatherQuestions(v);
  // Several questions, or a resume that finds the numbered journals of several: one journal each.
  const several = questions.length > 1 || (v.resume === true && !existsSync(out) && existsSync(questionJournal(out, 1)));

  const doc = await readFiles(positionals, { stripGutenberg: !v['keep-gutenberg'] });
  if (several) return readQuestions({ v, file, out, doc, settings, progress, questions });
  let journal: Journal | null = null;
  if (v.resume && existsSync(out)) {
    journal = readJournal(out);
    checkResume(journal, { out, doc, file, question: questions[0], v });
  } else if (!v.resume && !v.force && existsSync(out) && statSync(out).size > 0) {
    throw new UsageError(`${out} already holds a read. Continue it with --resume, start over with --force, or choose another --out.`);
  }
  if (v.resume && !journal) noJournal(out, questions[0] !== undefined, say);
  const question = questions[0] ?? journal?.header.question ?? '';
  if (!question) throw new UsageError('Give the question with --question "...": the memory keeps what helps answer it.');
  // Chunks read before this run: a resume says how many it read itself.
  const readBefore = journal?.revisions.length ?? 0;
  let step = readBefore;
  const { engine } = await openEngine(v, (n) => say(`  step ${step + 1}: ${n.reason} Retrying in ${seconds(n.delayMs)} (retry ${n.attempt}).`), say);

  if (journal) refuseOtherModel(journal.header.engine, engineIdentity(engine), { out, force: v.force === true });

  const { headers, chunks } = journal
    ? { headers: [journal.header], chunks: chunksOf(journal.header) }
    : await newHeaders([question], { v, engine, doc, settings, say });
  const header: JournalHeader = headers[0]!;
  const total = chunks.length;
  // Every revision's memory, for tracing the answer's sources through them.
  const memories = journal?.revisions.map((r) => r.memory) ?? [];
  /** The answer on stdout, then its sources: in words, or with --json as one JSON line. */
  const printAnswer = (answer: string, sources: ReadSources) =>
    process.stdout.write(
      v.json ? `${JSON.stringify({ type: 'answer', question: header.question, answer, sources })}\n` : `${answer}\n${formatSources(sources, total)}`,
    );
  if (journal?.answer) {
    say(`${out} is a finished read: every chunk is read and answered.`);
    const answer = journal.answer.answer || journal.answer.reply;
    printAnswer(answer, journal.answer.sources ?? (await traceRead(doc, { question: header.question, chunks, memories, answer })));
    return 0;
  }

  const tokens = chunks.reduce((n, c) => n + c.tokens, 0);
  say(
    `${doc.name}: ${tokens.toLocaleString('en')} tokens in ${whole(total)} chunks of up to ${header.settings.chunkTokens.toLocaleString('en')}, ` +
      `memory ${header.settings.memoryTokens.toLocaleString('en')} tokens; ${describeEngine(engine)}` +
      `${header.prompts ? `; ${describePrompts(header.prompts)}` : ''}.`,
  );
  if (journal) say(`Resuming at chunk ${whole(step + 1)} of ${whole(total)}: ${whole(step)} already in ${out}.`);
  // An engine whose window is set at load (WebLLM) loads with the room the plan needs.
  await loadGpuEngine(engine, header.settings.contextTokens, say);

  const writer = new JournalWriter(out, !journal, journal?.validBytes);
  if (!journal) writer.append(header);
  const stop = new AbortController();
  const onSigint = () => stop.abort();
  process.once('SIGINT', onSigint);
  const t0 = performance.now();
  progress.begin();
  try {
    const loop = memoryLoop(journalLoop(header, journal, { text: doc.text, chunks, generator: engine, nextChunk: step, signal: stop.signal }));
    for await (const event of loop) {
      const { usage } = event.result;
      if (event.kind === 'revision') {
        const span = chunks[event.index]!;
        memories[event.index] = event.memory;
        const line = revisionLine(event, span, engine.tokenizer.count(event.memory));
        writer.append(line);
        step = event.index + 1;
        progress.readStep({
          chunk: step,
          total,
          memoryTokens: line.memoryTokens,
          ms: event.ms,
          promptTokens: usage.promptTokens,
          completionTokens: usage.completionTokens,
          cut: event.result.finishReason === 'length',
          retries: line.retries,
          place: doc.placeAt?.(span.start),
        });
      } else {
        const sources = await traceRead(doc, { question: header.question, chunks, memories, answer: event.answer || event.reply });
        writer.append(answerLine(event, header, sources));
        progress.done();
        const read = readBefore
          ? `the last ${whole(total - readBefore)} of ${whole(total)} chunks (${whole(readBefore)} were read before)`
          : `${whole(total)} chunks`;
        say(`Read ${read} in ${seconds(performance.now() - t0)}; every revision is in ${out}.`);
        if (!event.answer)
          say(
            `The reply gives no answer in the form the prompts${header.prompts ? ` (${promptSetName(header.prompts)})` : ''} ask for; the whole reply follows.`,
          );
        printAnswer(event.answer || event.reply, sources);
      }
    }
    return 0;
  } catch (e) {
    const saved = `${whole(step)} of ${whole(total)} chunks are saved in ${out}`;
    if (isAbortError(e) && stop.signal.aborted) {
      progress.error(`Stopped. ${saved}; run the same command with --resume to continue.`);
      return 130;
    }
    progress.error(`${e instanceof Error ? e.message : String(e)}`);
    progress.error(`${saved}; run the same command with --resume to continue from chunk ${whole(step + 1)}.`);
    return 1;
  } finally {
    process.off('SIGINT', onSigint);
    writer.close();
  }
}

/** A --resume with no journal to continue: a new read where a question is given (said so), else nothing to do. */
function noJournal(out: string, asked: boolean, say: (line: string) => void): void {
  const where = `neither ${out} nor ${questionJournal(out, 1)} (a read of several questions) is there`;
  if (!asked)
    throw new UsageError(`--resume has no journal to continue: ${where}. Name the journal with --out FILE, or give --question "..." to start a new read.`);
  say(`--resume: there is no journal to continue (${where}), so this read starts at the first chunk.`);
}
