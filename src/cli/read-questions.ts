/**
 * `memagent read` with several questions: the book read once for them all.
 * Each question has its own memory loop and journal; the loops write their
 * steps together through one StepBatcher (a batch of sequences, a server's
 * concurrent requests, else in turns), so every memory moves on chunk by chunk
 * together. A question that fails fails alone, its journal kept for --resume.
 */
import { type BatchMember, StepBatcher } from '../core/batch';
import { isAbortError, withOwnTuner } from '../core/generation';
import { appLoopMethod, memoryLoop } from '../core/loop';
import type { ReadSettings } from '../core/plan';
import { batchSender } from '../engines/batch-sender';
import type { Engine } from '../engines/engine';
import { describeEngine, describePrompts, openEngine, type ServerFlags, seconds } from './engine';
import { loadGpuEngine } from './gpu-engine';
import { answerLine, type Journal, type JournalHeader, JournalWriter, revisionLine } from './journal';
import type { Progress } from './progress';
import type { PromptFlags } from './prompts';
import { promptSetName } from './prompts';
import { type QuestionJournalFlags, questionJournals } from './question-journals';
import { chunksOf, engineIdentity, newHeaders, refuseOtherModel } from './read-start';
import type { ReadText } from './read-set';
import { formatSources, type ReadSources, traceRead } from './sources';

export type QuestionsReadFlags = ServerFlags & PromptFlags & QuestionJournalFlags & { json?: boolean };

export interface QuestionsRead {
  v: QuestionsReadFlags;
  file: string;
  out: string;
  doc: ReadText;
  settings: ReadSettings;
  progress: Progress;
  /** The questions given; none on a resume that takes them from the journals. */
  questions: string[];
}

type Outcome = { kind: 'answer'; answer: string; sources: ReadSources } | { kind: 'failed'; error: string } | { kind: 'stopped' };

/** One question of the read, as it goes. */
interface Question {
  /** Its number, from 1, as its journal's name and the output give it. */
  n: number;
  path: string;
  header: JournalHeader;
  journal: Journal | null;
  /** Every revision's memory, for tracing the answer's sources through them. */
  memories: string[];
  /** Chunks read. */
  step: number;
  outcome?: Outcome;
}

export async function readQuestions(r: QuestionsRead): Promise<number> {
  const { v, doc, progress } = r;
  const say = progress.say;
  const { paths, journals } = questionJournals(r.out, r.questions, { doc, file: r.file, v, say });

  const { engine } = await openEngine(v, (n) => say(`  a step: ${n.reason} Retrying in ${seconds(n.delayMs)} (retry ${n.attempt}).`), say);
  journals?.forEach((j, i) => refuseOtherModel(j.header.engine, engineIdentity(engine), { out: paths[i]!, force: v.force === true }));
  const { headers, chunks } = journals
    ? { headers: journals.map((j) => j.header), chunks: chunksOf(journals[0]!.header) }
    : await newHeaders(r.questions, { v, engine, doc, settings: r.settings, say });
  const total = chunks.length;
  const questions: Question[] = headers.map((header, i) => {
    const journal = journals?.[i] ?? null;
    return { n: i + 1, path: paths[i]!, header, journal, memories: journal?.revisions.map((rev) => rev.memory) ?? [], step: journal?.revisions.length ?? 0 };
  });
  const output = new OrderedOutput(questions, total, v.json === true);

  const header = headers[0]!;
  const tokens = chunks.reduce((n, c) => n + c.tokens, 0);
  say(
    `${doc.name}: ${tokens.toLocaleString('en')} tokens in ${total} chunks of up to ${header.settings.chunkTokens.toLocaleString('en')}, ` +
      `memory ${header.settings.memoryTokens.toLocaleString('en')} tokens; ${describeEngine(engine)}` +
      `${header.prompts ? `; ${describePrompts(header.prompts)}` : ''}.`,
  );
  say(`${questions.length} questions, read together, each with its journal: ${paths[0]} to ${paths.at(-1)}.`);
  for (const q of questions) {
    if (q.journal?.answer) {
      say(`q${q.n}: ${q.path} is a finished read: every chunk is read and answered.`);
      const answer = q.journal.answer.answer || q.journal.answer.reply;
      const sources = q.journal.answer.sources ?? (await traceRead(doc, { question: q.header.question, chunks, memories: q.memories, answer }));
      output.settle(q, { kind: 'answer', answer, sources });
    } else if (q.journal) say(`q${q.n}: resuming at chunk ${q.step + 1} of ${total}: ${q.step} already in ${q.path}.`);
  }
  const reading = questions.filter((q) => !q.outcome);
  if (reading.length === 0) return 0;

  await loadGpuEngine(engine, header.settings.contextTokens, say);
  const limit = await batchLimit(engine, header.settings.contextTokens, say);
  const batcher = new StepBatcher(batchSender(engine, limit), limit);
  // Every question joins before any asks: the first step waits for all of them.
  const members = reading.map(() => batcher.join());
  const writers = reading.map((q) => {
    const writer = new JournalWriter(q.path, !q.journal, q.journal?.validBytes);
    if (!q.journal) writer.append(q.header);
    return writer;
  });
  const stop = new AbortController();
  const onSigint = () => stop.abort();
  process.once('SIGINT', onSigint);
  const t0 = performance.now();
  progress.begin();

  /** Reads one question to its answer; a failure or a stop is its outcome, never thrown. */
  const read = async (q: Question, member: BatchMember, writer: JournalWriter): Promise<void> => {
    try {
      const loop = memoryLoop({
        text: doc.text,
        chunks,
        question: q.header.question,
        generator: withOwnTuner(member),
        templates: q.header.templates,
        memoryTokens: q.header.settings.memoryTokens,
        sampling: { temperature: q.header.settings.temperature, topP: q.header.settings.topP, seed: q.header.settings.seed },
        ...(q.header.initialMemory !== undefined && { initialMemory: q.header.initialMemory }),
        method: appLoopMethod(q.header.prompts?.answerStyle),
        resume: q.journal?.revisions.length ? { nextChunk: q.step, memory: q.journal.revisions.at(-1)!.memory } : undefined,
        signal: stop.signal,
      });
      for await (const event of loop) {
        const { usage } = event.result;
        if (event.kind === 'revision') {
          const span = chunks[event.index]!;
          q.memories[event.index] = event.memory;
          const line = revisionLine(event, span, engine.tokenizer.count(event.memory));
          writer.append(line);
          q.step = event.index + 1;
          const writing = questions.filter((o) => !o.outcome);
          progress.questionStep({
            question: q.n,
            questions: questions.length,
            writing: writing.length,
            slowest: Math.min(...writing.map((o) => o.step)),
            chunk: q.step,
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
          // Its last step is written: the other questions' next batch need not wait while its sources are traced.
          member.leave();
          const answer = event.answer || event.reply;
          const sources = await traceRead(doc, { question: q.header.question, chunks, memories: q.memories, answer });
          writer.append(answerLine(event, q.header, sources));
          if (!event.answer)
            say(
              `q${q.n}: the reply gives no answer in the form the prompts${q.header.prompts ? ` (${promptSetName(q.header.prompts)})` : ''} ask for; the whole reply is printed.`,
            );
          output.settle(q, { kind: 'answer', answer, sources });
        }
      }
    } catch (e) {
      if (isAbortError(e) && stop.signal.aborted) return output.settle(q, { kind: 'stopped' });
      const error = e instanceof Error ? e.message : String(e);
      progress.error(`q${q.n} failed: ${error} ${q.step} of ${total} chunks are saved in ${q.path}.`);
      output.settle(q, { kind: 'failed', error });
    } finally {
      member.leave();
      writer.close();
    }
  };

  try {
    await Promise.all(reading.map((q, i) => read(q, members[i]!, writers[i]!)));
  } finally {
    process.off('SIGINT', onSigint);
  }
  progress.done();
  const saved = (qs: Question[]) => qs.map((q) => `q${q.n}: ${q.step} of ${total} chunks in ${q.path}`).join('; ');
  const stopped = questions.filter((q) => q.outcome?.kind === 'stopped');
  if (stopped.length) {
    progress.error(`Stopped. Saved: ${saved(stopped)}. Run the same command with --resume to continue.`);
    return 130;
  }
  const failed = questions.filter((q) => q.outcome?.kind === 'failed');
  if (failed.length) {
    progress.error(
      `${failed.length} of ${questions.length} questions failed; saved: ${saved(failed)}. Run the same command with --resume to continue ${failed.length === 1 ? 'it' : 'them'}.`,
    );
    return 1;
  }
  say(`Read ${total} chunks for ${questions.length} questions in ${seconds(performance.now() - t0)}; every revision is in their journals.`);
  return 0;
}

/** The engine's batch size for steps of `contextTokens`, said once with its reason; none where the engine has none. */
async function batchLimit(engine: Engine, contextTokens: number, say: (line: string) => void): Promise<number | undefined> {
  if (!engine.batchLimit) return undefined;
  try {
    const limit = await engine.batchLimit(contextTokens);
    say(`At most ${limit.size} questions are written in one batch: ${limit.reason}`);
    return limit.size;
  } catch (e) {
    // Without a size the engine is given every question's step at once: what it would do anyway.
    say(`The batch size could not be worked out (${e instanceof Error ? e.message : String(e)}); every question's step goes in one batch.`);
    return undefined;
  }
}

/**
 * The answers on stdout in the questions' order, each as soon as it and every
 * one before it are settled: under its question with its sources in words,
 * or with --json one JSON line per question.
 */
class OrderedOutput {
  private printed = 0;

  constructor(
    private readonly questions: readonly Question[],
    private readonly total: number,
    private readonly json: boolean,
  ) {}

  settle(q: Question, outcome: Outcome): void {
    q.outcome = outcome;
    for (let next = this.questions[this.printed]; next?.outcome; next = this.questions[++this.printed]) this.print(next, next.outcome);
  }

  private print(q: Question, o: Outcome): void {
    const question = q.header.question;
    if (o.kind === 'stopped') return;
    if (this.json) {
      const line =
        o.kind === 'answer'
          ? { type: 'answer', question, answer: o.answer, sources: o.sources }
          : { type: 'failed', question, error: o.error, journal: q.path };
      process.stdout.write(`${JSON.stringify(line)}\n`);
      return;
    }
    const body = o.kind === 'answer' ? `${o.answer}\n${formatSources(o.sources, this.total)}` : `No answer: ${o.error}\n`;
    process.stdout.write(`${q.n > 1 ? '\n' : ''}Question ${q.n}: ${question}\n${body}`);
  }
}
