/**
 * `memagent read --method infmem` reading its questions: one, or several at
 * once, each with its own loop, planner state, journal and stop, as a read of
 * it alone would go (the app reads each as a run of its own). Every chunk
 * written is journaled with the planner's state before the next is planned;
 * Ctrl-C stops every question, a failed request fails its question alone.
 */
import { isAbortError } from '../core/generation';
import { type InfmemAnswerEvent, type InfmemEvent, infmemLoop, type InfmemSteps, type PlanEvent } from '../core/infmem/loop';
import type { InfmemDocument } from '../core/infmem/retrieval';
import { seconds } from './engine';
import { type InfmemJournal, type InfmemJournalAnswer, type InfmemJournalHeader, resumeOf, revisionLine } from './infmem-journal';
import type { InfmemSources, InfmemWritten } from './infmem-sources';
import { JournalWriter } from './journal';
import { whole } from './numbers';
import type { InfmemStep, Progress } from './progress';
import { InOrder } from './question-output';
import { formatSources, type ReadSources } from './sources';
import { abortOnCtrlC } from './ctrl-c';

/** How one question's read ended. */
export type InfmemOutcome =
  | { kind: 'answer'; answer: Pick<InfmemJournalAnswer, 'answer' | 'final' | 'step'>; sources: ReadSources }
  | { kind: 'failed'; error: string }
  | { kind: 'stopped' };

export interface InfmemQuestion {
  /** Its number from 1, as its journal's name and the output give it. */
  n: number;
  path: string;
  header: InfmemJournalHeader;
  /** The journal it resumes; null for a new read. */
  journal: InfmemJournal | null;
  /** Chunks written so far. */
  step: number;
  outcome?: InfmemOutcome;
}

export interface InfmemReading {
  document: InfmemDocument;
  questions: InfmemQuestion[];
  /** Each question's steps, sending its requests with the read's signal. */
  steps(signal: AbortSignal): InfmemSteps;
  /** Said after the read's time: the requests this run sent, where it sent any. */
  requests(): string;
  /** Traces an answer's sources through the chunks written and the passages retrieved with them. */
  sources: InfmemSources;
  json: boolean;
  /** Progress and messages on stderr: `say` (none with --quiet), `error` (failures and stops, always). */
  progress: Progress;
  /** The answers, on stdout. */
  write(text: string): void;
}

/** The chunks a journal holds, as tracing takes them. */
const writtenOf = (journal: InfmemJournal | null): InfmemWritten[] => journal?.revisions.map(({ index, units, memory }) => ({ index, units, memory })) ?? [];

/** Reads every question not answered yet; the exit code: 0 all answered, 1 one failed, 130 stopped. */
export async function readInfmemQuestions(r: InfmemReading): Promise<number> {
  const several = r.questions.length > 1;
  const { progress } = r;
  // An answer printed while other questions read goes where their lines were; one question's goes below its line.
  const write = (text: string) => (several ? progress.clear() : progress.done(), r.write(text));
  const output = new InOrder(r.questions, (q) => printOutcome(q, { several, json: r.json, total: r.document.chunks.length, write }));
  const total = r.document.chunks.length;
  for (const q of r.questions) {
    const done = q.journal?.answer;
    if (done) {
      progress.say(`${tag(q, several)}${q.path} is a finished read: its answer follows.`);
      // A journal written before sources were kept has them traced again from its chunks.
      const sources = done.sources ?? (await r.sources.trace(q.header.question, writtenOf(q.journal), done.answer || done.final));
      output.settle(q, { kind: 'answer', answer: done, sources });
    } else if (q.journal?.revisions.length) {
      const last = q.journal.revisions.at(-1)!;
      progress.say(
        `${tag(q, several)}Resuming at chunk ${whole(q.step + 1)} of ${whole(total)}: ${whole(q.step)} already in ${q.path}, with ${last.votes} ${last.votes === 1 ? 'vote' : 'votes'} to stop in a row and ${whole(last.history.length)} ${last.history.length === 1 ? 'search' : 'searches'} so far.`,
      );
    }
  }
  const open = r.questions.filter((q) => !q.outcome);
  if (!open.length) return 0;
  const stop = abortOnCtrlC();
  const t0 = performance.now();
  progress.begin();
  try {
    await Promise.all(open.map((q) => readOne(r, q, { signal: stop.signal, settle: (o) => output.settle(q, o), several })));
  } finally {
    stop.release();
  }
  return conclude(r, performance.now() - t0);
}

/** Reads one question to its answer, journaling each chunk; a failure or a stop is its outcome, never thrown. */
async function readOne(
  r: InfmemReading,
  q: InfmemQuestion,
  { signal, settle, several }: { signal: AbortSignal; settle: (o: InfmemOutcome) => void; several: boolean },
) {
  const writer = new JournalWriter(q.path, !q.journal, q.journal?.validBytes);
  if (!q.journal) writer.append(q.header);
  const total = r.document.chunks.length;
  const resume = resumeOf(q.journal);
  const { earlyStop } = q.header.settings;
  const say = (line: string) => r.progress.say(`${tag(q, several)}${line}`);
  const written = writtenOf(q.journal);
  const at: InfmemStep = {
    question: q.n,
    questions: r.questions.length,
    chunk: q.step + 1,
    total,
    votes: q.journal?.revisions.at(-1)?.votes ?? 0,
    earlyStop,
    state: 'reading',
  };
  const show = (step: Partial<InfmemStep>, line?: string) => {
    Object.assign(at, step);
    r.progress.infmemStep({ ...at, place: r.sources.placeOf(at.chunk - 1) }, line === undefined ? undefined : `${tag(q, several)}${line}`);
  };
  const loop = infmemLoop({ document: r.document, question: q.header.question, steps: r.steps(signal), earlyStop, signal, ...(resume && { resume }) });
  const step = { plan: null as PlanEvent | null, startedAt: performance.now() };
  try {
    for await (const e of loop) {
      report(e, { total, earlyStop, say, show });
      if (e.kind === 'plan') step.plan = e;
      else if (e.kind === 'write') {
        writer.append(revisionLine(e, step.plan, performance.now() - step.startedAt));
        written.push({ index: e.index, units: e.units, memory: e.memory });
        q.step = e.index + 1;
        step.startedAt = performance.now();
      } else {
        const sources = await r.sources.trace(q.header.question, written, e.answer || e.final);
        writer.append({ ...answerLine(e, step.plan, performance.now() - step.startedAt), sources });
        show({ state: 'answered', step: e.step });
        if (several) say(`answered, having read ${whole(e.step)} of ${whole(total)} chunks`);
        settle({ kind: 'answer', answer: e, sources });
      }
    }
  } catch (e) {
    if (isAbortError(e) && signal.aborted) return settle({ kind: 'stopped' });
    const error = e instanceof Error ? e.message : String(e);
    r.progress.error(`${tag(q, several)}${error}`);
    if (!several) r.progress.error(`${saved(q, total)}; run the same command with --resume to continue from chunk ${whole(q.step + 1)}.`);
    settle({ kind: 'failed', error });
  } finally {
    writer.close();
  }
}

/** The journal's last line: the answer, and where votes ended the read early. */
function answerLine(e: InfmemAnswerEvent, plan: PlanEvent | null, ms: number): InfmemJournalAnswer {
  const stopped = plan?.ends ? { index: plan.index, votes: plan.votes } : undefined;
  return { type: 'answer', answer: e.answer, final: e.final, step: e.step, ...(stopped && { stopped }), ms, committedAt: new Date().toISOString() };
}

function tag(q: InfmemQuestion, several: boolean): string {
  return several ? `q${q.n}: ` : '';
}

function saved(q: InfmemQuestion, total: number): string {
  return `${whole(q.step)} of ${whole(total)} chunks are saved in ${q.path}`;
}

/** How a question's steps are told: messages, and its place on the progress line with the line a step prints where lines are asked for. */
interface Teller {
  total: number;
  earlyStop: number;
  say(line: string): void;
  show(step: Partial<InfmemStep>, line?: string): void;
}

/** One step of the read in words, on stderr: a line per step, or the question's progress line redrawn. */
function report(e: InfmemEvent, { total, earlyStop, say, show }: Teller): void {
  if (e.kind === 'plan') {
    const asked = e.retrievals.map((r) => `${JSON.stringify(r.query)}${r.fallback ? ` (the question: ${r.fallback})` : ''}`).join(', ');
    // A reply without STOP votes only when it holds no call at all; a call to another tool retrieves nothing.
    const what =
      e.stop || e.votes > 0
        ? `planner voted to stop (${e.votes} of ${earlyStop} in a row)`
        : asked
          ? `planner searched ${asked}`
          : 'planner called no search tool';
    show({ chunk: e.index + 1, votes: e.votes, state: e.ends ? 'stopped' : 'reading' }, `chunk ${whole(e.index + 1)} of ${whole(total)}: ${what}`);
    if (e.ends) say(`Stopped before chunk ${whole(e.index + 1)}: ${earlyStop} votes in a row. Answering from the memory.`);
  } else if (e.kind === 'write') {
    show(
      { chunk: e.index + 1, votes: e.votes },
      `chunk ${whole(e.index + 1)} of ${whole(total)}: memory written (${e.memory.length.toLocaleString('en')} characters${e.units.length ? `, with ${e.units.length} retrieved units` : ''})`,
    );
  } else if (!e.answer) {
    say('The reply gives no answer in the form "the answer is …"; the whole reply follows.');
  }
}

/**
 * The answer under its question: one question's as it always was (the answer,
 * or with --json one line), several each under `Question N:`, or with --json
 * one line each, `{"type":"failed",…}` for one that failed. A stopped question
 * prints nothing: the whole read stopped.
 */
function printOutcome(
  q: InfmemQuestion,
  { several, json, total, write }: { several: boolean; json: boolean; total: number; write: (text: string) => void },
): void {
  const o = q.outcome!;
  if (o.kind === 'stopped') return;
  const { question } = q.header;
  const chunks = q.header.chunks;
  if (json) {
    const line =
      o.kind === 'answer'
        ? { type: 'answer', question, answer: o.answer.answer, final: o.answer.final, step: o.answer.step, chunks, sources: o.sources }
        : { type: 'failed', question, error: o.error, journal: q.path };
    return write(`${JSON.stringify(line)}\n`);
  }
  const body = o.kind === 'answer' ? `${o.answer.answer || o.answer.final}\n${formatSources(o.sources, total)}` : `No answer: ${o.error}\n`;
  write(several ? `${q.n > 1 ? '\n' : ''}Question ${q.n}: ${question}\n${body}` : body);
}

/** The last words on stderr, and the exit code. */
function conclude(r: InfmemReading, ms: number): number {
  r.progress.done();
  const { questions } = r;
  const total = r.document.chunks.length;
  const several = questions.length > 1;
  const stopped = questions.filter((q) => q.outcome?.kind === 'stopped');
  if (stopped.length) {
    r.progress.error(
      several
        ? `Stopped. Saved: ${stopped.map((q) => `q${q.n}: ${whole(q.step)} of ${whole(total)} chunks in ${q.path}`).join('; ')}. Run the same command with --resume to continue.`
        : `Stopped. ${saved(stopped[0]!, total)}; run the same command with --resume to continue.`,
    );
    return 130;
  }
  const failed = questions.filter((q) => q.outcome?.kind === 'failed');
  if (failed.length) {
    if (several)
      r.progress.error(
        `${failed.length} of ${questions.length} questions failed; saved: ${failed.map((q) => `q${q.n}: ${whole(q.step)} of ${whole(total)} chunks in ${q.path}`).join('; ')}. Run the same command with --resume to continue ${failed.length === 1 ? 'it' : 'them'}.`,
      );
    return 1;
  }
  r.progress.say(
    several
      ? `Answered ${questions.length} questions in ${seconds(ms)}${r.requests()}; every step is in their journals.`
      : readLine(questions[0]!, total, ms) + `${r.requests()}; every step is in ${questions[0]!.path}.`,
  );
  return 0;
}

/** How much one question's read read: the chunks it got to, and those written before this run. */
function readLine(q: InfmemQuestion, total: number, ms: number): string {
  const step = q.outcome?.kind === 'answer' ? q.outcome.answer.step : q.step;
  const before = q.journal?.revisions.length ?? 0;
  return `Read ${whole(step)} of ${whole(total)} chunks${before ? ` (${whole(before)} of them written before this run)` : ''} in ${seconds(ms)}`;
}
