/**
 * `memagent read <file>`: a whole book read by the memory loop, every
 * revision journaled (journal.ts) so that a read stopped anywhere resumes.
 */
import { existsSync, statSync } from 'node:fs';
import type { ChunkSpan } from '../core/chunker';
import { isAbortError, withOwnTuner } from '../core/generation';
import { appLoopMethod, memoryLoop } from '../core/loop';
import { planRead, readSettings } from '../core/plan';
import type { Engine } from '../engines/engine';
import { OpenAIEngine } from '../engines/openai/engine';
import { WebLLMEngine } from '../engines/webllm/engine';
import { parseFlags, settingsFlags, UsageError } from './flags';
import { chunkRead, readFiles } from './read-set';
import { choosePrompts, describeEngine, describePrompts, engineConfigOf, openEngine, seconds } from './engine';
import { loadGpuEngine } from './gpu-engine';
import {
  type Journal,
  type JournalAnswer,
  type JournalHeader,
  type JournalRevision,
  JOURNAL_FORMAT,
  JOURNAL_VERSION,
  JournalWriter,
  readJournal,
  toJournal,
} from './journal';
import { Progress, progressMode } from './progress';
import { promptSetName } from './prompts';
import { formatSources, type ReadSources, traceRead } from './sources';

/** read's own flags; the server, prompt and settings flags are common (flags.ts). */
const READ_OPTIONS = {
  question: { type: 'string', short: 'q' },
  out: { type: 'string', short: 'o' },
  resume: { type: 'boolean' },
  force: { type: 'boolean' },
  seed: { type: 'string' },
  'keep-gutenberg': { type: 'boolean' },
  json: { type: 'boolean' },
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

  const doc = await readFiles(positionals, { stripGutenberg: !v['keep-gutenberg'] });
  let journal: Journal | null = null;
  if (v.resume && existsSync(out)) {
    journal = readJournal(out);
    const h = journal.header;
    if (h.document.hash !== doc.hash) throw new UsageError(`${out} was written for another file ("${h.document.name}"), not ${file}.`);
    if (v.question !== undefined && v.question.trim() !== h.question) {
      throw new UsageError(`${out} reads for another question ("${h.question}"). Drop --question to continue it, or choose another --out.`);
    }
    if (h.chunks.at(-1)?.[1] !== doc.text.length)
      throw new UsageError(`${out} does not cover this text: its chunks were cut for another version. Start over with --force.`);
    const clash = (flag: string, given: string | undefined, kept: number | undefined) => {
      if (given !== undefined && Number(given) !== kept)
        throw new UsageError(`${out} was read with --${flag} ${kept}; a resume keeps it. Drop --${flag}, or start over with --force.`);
    };
    clash('chunk', v.chunk, h.settings.requestedChunkTokens);
    clash('memory', v.memory, h.settings.memoryTokens);
    const asked = v['prompts-file'] !== undefined ? 'file' : v.prompts === undefined ? undefined : /\.json$/i.test(v.prompts) ? 'custom' : v.prompts;
    if (asked !== undefined && h.prompts && asked !== h.prompts.set) {
      throw new UsageError(
        `${out} was read with the prompts: ${promptSetName(h.prompts)}; a resume keeps them. Drop --prompts and --prompts-file, or start over with --force.`,
      );
    }
  } else if (!v.resume && !v.force && existsSync(out) && statSync(out).size > 0) {
    throw new UsageError(`${out} already holds a read. Continue it with --resume, start over with --force, or choose another --out.`);
  }
  const question = (v.question ?? journal?.header.question ?? '').trim();
  if (!question) throw new UsageError('Give the question with --question "...": the memory keeps what helps answer it.');

  let step = journal?.revisions.length ?? 0;
  const { engine } = await openEngine(v, (n) => say(`  step ${step + 1}: ${n.reason} Retrying in ${seconds(n.delayMs)} (retry ${n.attempt}).`), say);

  if (journal) refuseOtherModel(journal.header.engine, engineIdentity(engine), { out, force: v.force === true });

  let header: JournalHeader;
  let chunks: ChunkSpan[];
  if (journal) {
    header = journal.header;
    chunks = header.chunks.map(([start, end, tokens]) => ({ start, end, tokens }));
  } else {
    const prompts = await choosePrompts(v, engine.id, say);
    const templates = { ...prompts.set.templates };
    const count = (s: string) => engine.tokenizer.count(s);
    const plan = planRead(settings, { contextWindow: engine.contextWindow, count, updateTemplate: templates.update, questionTokens: count(question) });
    chunks = chunkRead(doc, engine.tokenizer, plan.chunkTokens);
    header = {
      type: JOURNAL_FORMAT,
      version: JOURNAL_VERSION,
      document: { name: doc.name, hash: doc.hash, chars: doc.text.length, ...(doc.books && { books: doc.books }) },
      question,
      engine: engineIdentity(engine),
      settings: plan,
      templates,
      prompts: prompts.record,
      initialMemory: prompts.set.initialMemory,
      chunks: chunks.map((c) => [c.start, c.end, c.tokens]),
      createdAt: new Date().toISOString(),
    };
  }
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
    `${doc.name}: ${tokens.toLocaleString('en')} tokens in ${total} chunks of up to ${header.settings.chunkTokens.toLocaleString('en')}, ` +
      `memory ${header.settings.memoryTokens.toLocaleString('en')} tokens; ${describeEngine(engine)}` +
      `${header.prompts ? `; ${describePrompts(header.prompts)}` : ''}.`,
  );
  if (journal) say(`Resuming at chunk ${step + 1} of ${total}: ${step} already in ${out}.`);
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
    const loop = memoryLoop({
      text: doc.text,
      chunks,
      question: header.question,
      generator: withOwnTuner(engine),
      templates: header.templates,
      memoryTokens: header.settings.memoryTokens,
      sampling: { temperature: header.settings.temperature, topP: header.settings.topP, seed: header.settings.seed },
      ...(header.initialMemory !== undefined && { initialMemory: header.initialMemory }),
      method: appLoopMethod(header.prompts?.answerStyle),
      resume: journal?.revisions.length ? { nextChunk: step, memory: journal.revisions.at(-1)!.memory } : undefined,
      signal: stop.signal,
    });
    for await (const event of loop) {
      const { usage } = event.result;
      const retries = event.result.retries ?? 0;
      if (event.kind === 'revision') {
        const span = chunks[event.index]!;
        memories[event.index] = event.memory;
        const memoryTokens = engine.tokenizer.count(event.memory);
        writer.append({
          type: 'revision',
          index: event.index,
          revision: event.index + 1,
          start: span.start,
          end: span.end,
          chunkTokens: span.tokens,
          memory: event.memory,
          memoryTokens,
          promptTokens: usage.promptTokens,
          completionTokens: usage.completionTokens,
          ms: event.ms,
          finishReason: event.result.finishReason,
          retries,
          committedAt: new Date().toISOString(),
        } satisfies JournalRevision);
        step = event.index + 1;
        const cut = event.result.finishReason === 'length';
        progress.readStep({
          chunk: step,
          total,
          memoryTokens,
          ms: event.ms,
          promptTokens: usage.promptTokens,
          completionTokens: usage.completionTokens,
          cut,
          retries,
          place: doc.placeAt?.(span.start),
        });
      } else {
        const sources = await traceRead(doc, { question: header.question, chunks, memories, answer: event.answer || event.reply });
        writer.append({
          type: 'answer',
          answer: event.answer,
          reply: event.reply,
          sources: toJournal(header, sources),
          promptTokens: usage.promptTokens,
          completionTokens: usage.completionTokens,
          ms: event.ms,
          retries,
          committedAt: new Date().toISOString(),
        } satisfies JournalAnswer);
        progress.done();
        say(`Read ${total} chunks in ${seconds(performance.now() - t0)}; every revision is in ${out}.`);
        if (!event.answer)
          say(
            `The reply gives no answer in the form the prompts${header.prompts ? ` (${promptSetName(header.prompts)})` : ''} ask for; the whole reply follows.`,
          );
        printAnswer(event.answer || event.reply, sources);
      }
    }
    return 0;
  } catch (e) {
    const saved = `${step} of ${total} chunks are saved in ${out}`;
    if (isAbortError(e) && stop.signal.aborted) {
      progress.error(`Stopped. ${saved}; run the same command with --resume to continue.`);
      return 130;
    }
    progress.error(`${e instanceof Error ? e.message : String(e)}`);
    progress.error(`${saved}; run the same command with --resume to continue from chunk ${step + 1}.`);
    return 1;
  } finally {
    process.off('SIGINT', onSigint);
    writer.close();
  }
}

/** The engine and model a journal records, to tell a resume with another one. */
function engineIdentity(engine: Engine): JournalHeader['engine'] {
  return {
    id: engine.id,
    ...(engine instanceof OpenAIEngine && { model: engine.model, baseUrl: engine.server.baseUrl }),
    ...(engine instanceof WebLLMEngine && { model: engine.model.id }),
  };
}

/** A resume with another engine or model would mix two models' writing in one memory: refused unless --force says it is meant. */
function refuseOtherModel(kept: JournalHeader['engine'], now: JournalHeader['engine'], { out, force }: { out: string; force: boolean }): void {
  if (force || (kept.id === now.id && (kept.model ?? '') === (now.model ?? ''))) return;
  const name = (e: JournalHeader['engine']) => `--engine ${e.id}${e.model ? ` (model ${e.model})` : ''}`;
  throw new UsageError(
    `${out} was read with ${name(kept)}, not ${name(now)}: resuming would mix two models in one memory. Resume with the same engine and model, or add --force to continue with this one.`,
  );
}
