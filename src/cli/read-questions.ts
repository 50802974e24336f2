/**
 * `memagent read` with several questions: the book read once for them all.
 * Each question has its own memory loop and journal; the loops write their
 * steps together through one StepBatcher (a batch of sequences, a server's
 * concurrent requests, else in turns), so every memory moves on chunk by chunk
 * together. A question that fails fails alone, its journal kept for --resume.
 */
import { type BatchMember, StepBatcher } from '../core/batch';
import type { ChunkSpan } from '../core/chunker';
import { isAbortError } from '../core/generation';
import { type AnswerEvent, type LoopInput, memoryLoop, type RevisionEvent } from '../core/loop';
import type { ReadSettings } from '../core/plan';
import { batchSender } from '../engines/batch-sender';
import type { Engine } from '../engines/engine';
import { describeEngine, describePrompts, openEngine, type ServerFlags, seconds } from './engine';
import { loadGpuEngine } from './gpu-engine';
import { answerLine, type Journal, journalLoop, JournalWriter, revisionLine } from './journal';
import type { Progress } from './progress';
import type { PromptFlags } from './prompts';
import { promptSetName } from './prompts';
import { type QuestionJournalFlags, questionJournals } from './question-journals';
import { OrderedOutput, type Question } from './question-output';
import { chunksOf, engineIdentity, newHeaders, refuseOtherModel } from './read-start';
import type { ReadText } from './read-set';
import { traceRead } from './sources';
import { whole } from './numbers';
import { abortOnCtrlC } from './ctrl-c';

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
  /** An engine already open, instead of the one the flags name (tests give one that batches). */
  engine?: Engine;
  /** Where the answers go: stdout unless given. */
  write?: (text: string) => void;
}

interface ReadingQuestion extends Question {
  /** The journal it resumes; null for a new read. */
  journal: Journal | null;
}

export async function readQuestions(r: QuestionsRead): Promise<number> {
  const { v, doc, progress } = r;
  const say = progress.say;
  const { paths, journals } = questionJournals(r.out, r.questions, { doc, file: r.file, v, say });
  // The engine's retries are of any question's request: the notice cannot name one.
  const engine = r.engine ?? (await openEngine(v, (n) => say(`  a step: ${n.reason} Retrying in ${seconds(n.delayMs)} (retry ${n.attempt}).`), say)).engine;
  journals?.forEach((j, i) => refuseOtherModel(j.header.engine, engineIdentity(engine), { out: paths[i]!, force: v.force === true }));
  const { headers, chunks } = journals
    ? { headers: journals.map((j) => j.header), chunks: chunksOf(journals[0]!.header) }
    : await newHeaders(r.questions, { v, engine, doc, settings: r.settings, say });
  const questions = headers.map((header, i): ReadingQuestion => {
    const journal = journals?.[i] ?? null;
    return { n: i + 1, path: paths[i]!, header, journal, memories: journal?.revisions.map((rev) => rev.memory) ?? [], step: journal?.revisions.length ?? 0 };
  });
  const write = r.write ?? ((text: string) => void process.stdout.write(text));
  const reading = new QuestionsReading({ doc, chunks, engine, progress, questions, json: v.json === true, write });
  if (!(await reading.introduce())) return 0;
  const { contextTokens } = headers[0]!.settings;
  await loadGpuEngine(engine, contextTokens, say);
  const limit = await batchLimit(engine, contextTokens, say);
  const atOnce = engine.parallel ? engine.requestsAtOnce : undefined;
  if (atOnce !== undefined && atOnce < headers.length)
    say(`At most ${atOnce} of the questions' requests are in flight at once (--in-flight); the others wait their turn.`);
  return reading.run(new StepBatcher(batchSender(engine, limit), limit));
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

/** The questions of one read, from the first words on stderr to the last answer on stdout. */
class QuestionsReading {
  private readonly output: OrderedOutput;
  private readonly total: number;
  private readonly say: (line: string) => void;

  constructor(
    private readonly r: {
      doc: ReadText;
      chunks: ChunkSpan[];
      engine: Engine;
      progress: Progress;
      questions: ReadingQuestion[];
      json: boolean;
      write: (text: string) => void;
    },
  ) {
    this.total = r.chunks.length;
    // An answer printed while other questions read goes where the progress line was, not after it.
    this.output = new OrderedOutput(r.questions, this.total, r.json, (text) => {
      r.progress.clear();
      r.write(text);
    });
    this.say = r.progress.say;
  }

  /** Says what is read and where each question stands, and prints the answers its journals already hold; false when none is left to read. */
  async introduce(): Promise<boolean> {
    const { doc, chunks, engine, questions } = this.r;
    const { header } = questions[0]!;
    const tokens = chunks.reduce((n, c) => n + c.tokens, 0);
    this.say(
      `${doc.name}: ${tokens.toLocaleString('en')} tokens in ${whole(this.total)} chunks of up to ${header.settings.chunkTokens.toLocaleString('en')}, ` +
        `memory ${header.settings.memoryTokens.toLocaleString('en')} tokens; ${describeEngine(engine)}` +
        `${header.prompts ? `; ${describePrompts(header.prompts)}` : ''}.`,
    );
    this.say(`${questions.length} questions, read together, each with its journal: ${questions[0]!.path} to ${questions.at(-1)!.path}.`);
    for (const q of questions) {
      const done = q.journal?.answer;
      if (done) {
        this.say(`q${q.n}: ${q.path} is a finished read: every chunk is read and answered.`);
        const answer = done.answer || done.reply;
        this.output.settle(q, { kind: 'answer', answer, sources: done.sources ?? (await this.trace(q, answer)) });
      } else if (q.journal) this.say(`q${q.n}: resuming at chunk ${whole(q.step + 1)} of ${whole(this.total)}: ${whole(q.step)} already in ${q.path}.`);
    }
    return questions.some((q) => !q.outcome);
  }

  /** Reads every unanswered question together to its answer; the exit code: 0 all answered, 1 one failed, 130 stopped. */
  async run(batcher: StepBatcher): Promise<number> {
    const open = this.r.questions.filter((q) => !q.outcome);
    // Every question joins before any asks: the first step waits for all of them.
    const members = open.map(() => batcher.join());
    // Every journal is begun before anything is read, so that a resume finds them all.
    const writers = open.map((q) => {
      const writer = new JournalWriter(q.path, !q.journal, q.journal?.validBytes);
      if (!q.journal) writer.append(q.header);
      return writer;
    });
    const stop = abortOnCtrlC();
    const t0 = performance.now();
    this.r.progress.begin();
    try {
      await Promise.all(open.map((q, i) => this.read(q, { member: members[i]!, writer: writers[i]!, signal: stop.signal })));
    } finally {
      stop.release();
    }
    return this.conclude(t0);
  }

  /** Reads one question to its answer; a failure or a stop is its outcome, never thrown. */
  private async read(q: ReadingQuestion, { member, writer, signal }: { member: BatchMember; writer: JournalWriter; signal: AbortSignal }): Promise<void> {
    try {
      for await (const event of memoryLoop(this.loopInput(q, member, signal))) {
        if (event.kind === 'revision') this.revised(q, event, writer);
        else {
          // Its last step is written: the other questions' next batch need not wait while its sources are traced.
          member.leave();
          await this.answered(q, event, writer);
        }
      }
    } catch (e) {
      if (isAbortError(e) && signal.aborted) return this.output.settle(q, { kind: 'stopped' });
      const error = e instanceof Error ? e.message : String(e);
      this.r.progress.error(`q${q.n} failed: ${error} ${whole(q.step)} of ${whole(this.total)} chunks are saved in ${q.path}.`);
      this.output.settle(q, { kind: 'failed', error });
    } finally {
      member.leave();
      writer.close();
    }
  }

  /** The loop of one question, as a read of it alone runs it, generating through its member of the batch. */
  private loopInput(q: ReadingQuestion, member: BatchMember, signal: AbortSignal): LoopInput {
    return journalLoop(q.header, q.journal, { text: this.r.doc.text, chunks: this.r.chunks, generator: member, nextChunk: q.step, signal });
  }

  private revised(q: ReadingQuestion, event: RevisionEvent, writer: JournalWriter): void {
    const span = this.r.chunks[event.index]!;
    q.memories[event.index] = event.memory;
    const line = revisionLine(event, span, this.r.engine.tokenizer.count(event.memory));
    writer.append(line);
    q.step = event.index + 1;
    const writing = this.r.questions.filter((o) => !o.outcome);
    const { usage } = event.result;
    this.r.progress.questionStep({
      question: q.n,
      questions: this.r.questions.length,
      writing: writing.length,
      slowest: Math.min(...writing.map((o) => o.step)),
      chunk: q.step,
      total: this.total,
      memoryTokens: line.memoryTokens,
      ms: event.ms,
      promptTokens: usage.promptTokens,
      completionTokens: usage.completionTokens,
      cut: event.result.finishReason === 'length',
      retries: line.retries,
      place: this.r.doc.placeAt?.(span.start),
    });
  }

  private async answered(q: ReadingQuestion, event: AnswerEvent, writer: JournalWriter): Promise<void> {
    const answer = event.answer || event.reply;
    const sources = await this.trace(q, answer);
    writer.append(answerLine(event, q.header, sources));
    const { prompts } = q.header;
    if (!event.answer)
      this.say(
        `q${q.n}: the reply gives no answer in the form the prompts${prompts ? ` (${promptSetName(prompts)})` : ''} ask for; the whole reply is printed.`,
      );
    this.output.settle(q, { kind: 'answer', answer, sources });
  }

  private trace(q: ReadingQuestion, answer: string) {
    return traceRead(this.r.doc, { question: q.header.question, chunks: this.r.chunks, memories: q.memories, answer });
  }

  /** After a resume, what this run read of each question it read, beside what was read before; nothing for a new read. */
  private resumedRead(): string {
    const read = this.r.questions.filter((q) => !q.journal?.answer);
    if (!read.some((q) => q.journal?.revisions.length)) return '';
    const parts = read.map((q) => {
      const before = q.journal?.revisions.length ?? 0;
      return `${whole(this.total - before)} for q${q.n} (${whole(before)} read before)`;
    });
    return `, resumed: this run read ${parts.join(', ')}`;
  }

  /** The last words on stderr, and the exit code. */
  private conclude(t0: number): number {
    const { progress, questions } = this.r;
    progress.done();
    const saved = (qs: Question[]) => qs.map((q) => `q${q.n}: ${whole(q.step)} of ${whole(this.total)} chunks in ${q.path}`).join('; ');
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
    this.say(
      `Read ${whole(this.total)} chunks for ${questions.length} questions in ${seconds(performance.now() - t0)}${this.resumedRead()}; every revision is in their journals.`,
    );
    return 0;
  }
}
