/**
 * How the command line shows a long job: on a terminal, one progress line
 * redrawn in place (log-update does the redrawing); piped, or with
 * `--progress lines`, one line per step as before; with `--quiet`, nothing.
 * Progress goes to stderr, so stdout carries only the answer and the tables.
 */
import { createLogUpdate } from 'log-update';
import { UsageError } from './flags';
import { whole } from './numbers';

export type ProgressMode = 'bar' | 'lines' | 'quiet';

/** The stream progress is written to: a terminal has `isTTY` and `columns`. */
export type ProgressStream = NodeJS.WritableStream & { isTTY?: boolean; columns?: number; rows?: number };

/** The mode the flags and the stream ask for: a redrawn line only where a person watches a terminal. */
export function progressMode(flags: { progress?: string; quiet?: boolean }, stream: ProgressStream): ProgressMode {
  if (flags.quiet) return 'quiet';
  if (flags.progress === undefined) return stream.isTTY ? 'bar' : 'lines';
  if (flags.progress === 'bar' || flags.progress === 'lines') return flags.progress;
  throw new UsageError(`--progress ${flags.progress} cannot be used: give bar (one line redrawn, on a terminal) or lines (one line per step).`);
}

/** "12.3 s", "4 min 05 s", "1 h 02 min": a duration as the progress line shows it. */
export function duration(ms: number): string {
  const s = Math.max(0, ms) / 1000;
  if (s < 60) return `${s.toFixed(1)} s`;
  const whole = Math.round(s);
  if (whole < 3600) return `${Math.floor(whole / 60)} min ${String(whole % 60).padStart(2, '0')} s`;
  return `${Math.floor(whole / 3600)} h ${String(Math.floor((whole % 3600) / 60)).padStart(2, '0')} min`;
}

const BAR_WIDTH = 20;

/** The size taken for a terminal that reports none, or 0 × 0 (a pseudo-terminal nobody sized, as `script` makes without a terminal around it). */
const DEFAULT_SIZE = { columns: 80, rows: 24 };

/**
 * The stream as log-update sees it: a terminal that reports no size would
 * otherwise be drawn at zero rows, which log-update takes as "draw nothing".
 */
function sized(stream: ProgressStream): ProgressStream {
  return {
    write: (chunk: string) => stream.write(chunk),
    isTTY: stream.isTTY,
    get columns() {
      return stream.columns || DEFAULT_SIZE.columns;
    },
    get rows() {
      return stream.rows || DEFAULT_SIZE.rows;
    },
  } as ProgressStream;
}

function bar(share: number): string {
  const filled = Math.round(Math.min(1, Math.max(0, share)) * BAR_WIDTH);
  return `[${'#'.repeat(filled)}${'-'.repeat(BAR_WIDTH - filled)}]`;
}

/** One step of a read, as the progress line reports it. */
export interface ReadStep {
  /** Chunks read so far, this one included. */
  chunk: number;
  total: number;
  memoryTokens: number;
  ms: number;
  promptTokens: number;
  completionTokens: number;
  /** The reply was cut at the memory's cap. */
  cut: boolean;
  retries: number;
  /** Where the chunk is ("Persuasion · Chapter 4"), where the book names its places. */
  place?: string;
}

/** The line a read printed per chunk before there was a redrawn line; kept as it was for pipes and scripts. */
export function readStepLine(s: ReadStep): string {
  return (
    `chunk ${whole(s.chunk)}/${whole(s.total)} (${Math.round((100 * s.chunk) / s.total)}%)${s.place ? ` · ${s.place}` : ''} · memory ${s.memoryTokens.toLocaleString('en')} tokens · ${(s.ms / 1000).toFixed(1)} s` +
    (s.cut ? ' · memory cut at its cap' : '') +
    (s.retries ? ` · ${s.retries} ${s.retries === 1 ? 'retry' : 'retries'}` : '')
  );
}

/** One question's chunk in a read of several, with where the whole read stands. */
export interface QuestionStep extends ReadStep {
  /** The question's number, from 1. */
  question: number;
  questions: number;
  /** Questions still reading or answering (not answered, not failed). */
  writing: number;
  /** Chunks read by the question furthest behind of those still writing: how far the read as a whole is. */
  slowest: number;
}

/** A line per chunk of each question, as `readStepLine`, naming the question and how many are still writing. */
export function questionStepLine(s: QuestionStep): string {
  return `q${s.question} ${readStepLine(s)} · ${s.writing} of ${s.questions} questions writing`;
}

/** Where one question of a read by InfMem's method stands, after its planner's or its writer's step. */
export interface InfmemStep {
  /** The question's number, from 1, and how many the read has. */
  question: number;
  questions: number;
  /** The chunk planned or written, from 1; where votes stopped the read, the chunk it stopped before. */
  chunk: number;
  total: number;
  /** The planner's votes to stop in a row so far, and how many end the read. */
  votes: number;
  earlyStop: number;
  /** Reading on; stopped by votes before `chunk` and answering; or answered. */
  state: 'reading' | 'stopped' | 'answered';
  /** Chunks the read got to, where it answered (the chunk stopped before included). */
  step?: number;
  place?: string;
}

/** A question's line in a read by InfMem's method: its chunk, its votes to stop, where votes stopped it. */
function infmemParts(s: InfmemStep, elapsed: string): Part[] {
  const who: Part = [s.questions > 1 ? `q${s.question}` : undefined, KEEP];
  const stopped = `stopped before chunk ${whole(s.chunk)} of ${whole(s.total)} after ${whole(s.votes)} ${s.votes === 1 ? 'vote' : 'votes'}`;
  if (s.state !== 'reading') {
    const read = s.votes >= s.earlyStop ? stopped : `read ${whole(s.step ?? s.chunk)} of ${whole(s.total)} chunks`;
    return [who, [read, KEEP], [s.state === 'stopped' ? 'answering' : 'answered', KEEP], [`${elapsed} elapsed`, 1]];
  }
  return [
    who,
    [`chunk ${whole(s.chunk)}/${whole(s.total)}`, KEEP],
    [`${Math.round((100 * s.chunk) / s.total)}%`, KEEP],
    [s.place, 5],
    [`${whole(s.votes)} of ${whole(s.earlyStop)} votes to stop`, KEEP],
    [`${elapsed} elapsed`, 1],
  ];
}

/** One finished sample of an evaluation. */
export interface SampleStep {
  done: number;
  /** Samples planned; 0 where not known yet. */
  total: number;
  /** What the sample was: its file, or its task and length. */
  label: string;
}

/**
 * The progress of one command. `say` writes a message line (kept above the
 * redrawn line), `error` one that shows even with --quiet, `done` leaves the
 * last redrawn line in place so what follows is printed below it.
 */
export class Progress {
  private readonly draw: ReturnType<typeof createLogUpdate> | null;
  private t0: number;
  /** Step times of this run only: a resumed read's earlier steps are not timed here. */
  private stepMs = 0;
  private steps = 0;
  /** A read of several questions: each question's memory size at its last step, and the tokens of this run's steps. */
  private readonly memories = new Map<number, number>();
  private tokens = 0;
  /** A read by InfMem's method: where each question stands. */
  private readonly infmem = new Map<number, InfmemStep>();
  private shown = false;

  constructor(
    readonly mode: ProgressMode,
    private readonly stream: ProgressStream,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.draw = mode === 'bar' ? createLogUpdate(sized(stream), { showCursor: true }) : null;
    this.t0 = now();
  }

  /** The work itself starts now: elapsed time counts from here, not from loading the book or the tokenizer. */
  begin(): void {
    this.t0 = this.now();
  }

  say = (line: string): void => {
    if (this.mode === 'quiet') return;
    this.error(line);
  };

  error = (line: string): void => {
    if (this.draw && this.shown) {
      // The message goes where the progress line was; the line is drawn again under it at the next step.
      this.draw.clear();
      this.shown = false;
    }
    this.stream.write(`${line}\n`);
  };

  /** A read's chunk: a line per chunk, or the one line redrawn. */
  readStep(s: ReadStep): void {
    this.stepMs += s.ms;
    this.steps += 1;
    if (this.mode === 'lines') this.stream.write(`${readStepLine(s)}\n`);
    if (!this.draw) return;
    const elapsed = this.now() - this.t0;
    // The steps left, the answer's included, at this run's own mean step time.
    const left = (this.stepMs / this.steps) * (s.total - s.chunk + 1);
    const tokens = s.promptTokens + s.completionTokens;
    this.redraw(bar(s.chunk / s.total), [
      [`chunk ${whole(s.chunk)}/${whole(s.total)}`, KEEP],
      [`${Math.round((100 * s.chunk) / s.total)}%`, KEEP],
      [s.place, 5],
      [`memory ${s.memoryTokens.toLocaleString('en')} tokens`, 2],
      [tokens > 0 && s.ms > 0 ? `${Math.round((tokens * 1000) / s.ms).toLocaleString('en')} tokens/s` : undefined, 3],
      [`${duration(elapsed)} elapsed`, 1],
      [s.chunk < s.total ? `about ${duration(left)} left` : 'answering', KEEP],
    ]);
  }

  /** A chunk of one question in a read of several: its own line, or the one line redrawn for the whole read. */
  questionStep(s: QuestionStep): void {
    this.stepMs += s.ms;
    this.steps += 1;
    if (this.mode === 'lines') this.stream.write(`${questionStepLine(s)}\n`);
    if (!this.draw) return;
    const elapsed = this.now() - this.t0;
    // The questions' steps are written together: the one furthest behind says what is left.
    const left = (this.stepMs / this.steps) * (s.total - s.slowest + 1);
    this.memories.set(s.question, s.memoryTokens);
    this.tokens += s.promptTokens + s.completionTokens;
    // Each question's memory has its own size: the smallest and the largest of them.
    const sizes = [...this.memories.values()];
    const [least, most] = [Math.min(...sizes), Math.max(...sizes)];
    // The questions' requests overlap, so the read's speed is every step's tokens over the time it has taken.
    const rate = this.tokens > 0 && elapsed > 0 ? `${whole((this.tokens * 1000) / elapsed)} tokens/s` : undefined;
    this.redraw(bar(s.slowest / s.total), [
      [`chunk ${whole(s.slowest)}/${whole(s.total)}`, KEEP],
      [`${Math.round((100 * s.slowest) / s.total)}%`, KEEP],
      [s.place, 5],
      [`${s.writing} of ${s.questions} questions writing`, KEEP],
      [`memory ${least === most ? whole(most) : `${whole(least)}–${whole(most)}`} tokens`, 2],
      [rate, 3],
      [`${duration(elapsed)} elapsed`, 1],
      [s.slowest < s.total ? `about ${duration(left)} left` : 'answering', KEEP],
    ]);
  }

  /**
   * A step of a read by InfMem's method: `line` where lines are asked for,
   * else one line per question redrawn in place (questions stop on their own
   * votes, each at its own chunk).
   */
  infmemStep(s: InfmemStep, line?: string): void {
    if (this.mode === 'lines' && line !== undefined) this.stream.write(`${line}\n`);
    if (!this.draw) return;
    this.infmem.set(s.question, s);
    const elapsed = duration(this.now() - this.t0);
    const width = (this.stream.columns || DEFAULT_SIZE.columns) - 1;
    const all = [...this.infmem.values()].sort((a, b) => a.question - b.question);
    // More questions than the terminal has rows: the first ones, and how many more, so that the redraw never scrolls.
    const room = Math.max(1, (this.stream.rows || DEFAULT_SIZE.rows) - 2);
    const lines = all.slice(0, room).map((q) => fit(bar(q.chunk / q.total), infmemParts(q, elapsed), width));
    if (all.length > room) lines.push(`… and ${whole(all.length - room)} more questions`);
    this.draw!(lines.join('\n'));
    this.shown = true;
  }

  /** An evaluation's sample: its own line when lines are asked for, else the one line redrawn. */
  sample(line: string, s: SampleStep): void {
    if (this.mode === 'lines') this.stream.write(`${line}\n`);
    if (!this.draw) return;
    const elapsed = this.now() - this.t0;
    // Samples run side by side, so the wall clock per finished sample is what predicts the rest.
    const left = s.total > s.done ? `about ${duration((elapsed / s.done) * (s.total - s.done))} left` : 'writing the table';
    this.redraw(s.total ? bar(s.done / s.total) : undefined, [
      [`samples ${whole(s.done)}/${s.total ? whole(s.total) : '?'}`, KEEP],
      [s.label, 2],
      [`${duration(elapsed)} elapsed`, 1],
      [s.total ? left : undefined, KEEP],
    ]);
  }

  /** Chunks inside the one sample being read (an evaluation with --concurrency 1). */
  inner(text: string): void {
    if (this.draw) this.redraw(undefined, [[text, KEEP]]);
  }

  /** Takes the redrawn line away, so that something else can be written where it was; the next step draws it again. */
  clear(): void {
    if (this.draw && this.shown) this.draw.clear();
    this.shown = false;
  }

  done(): void {
    if (this.draw && this.shown) this.draw.done();
    this.shown = false;
  }

  private redraw(gauge: string | undefined, parts: Part[]): void {
    const width = (this.stream.columns || DEFAULT_SIZE.columns) - 1;
    this.draw!(fit(gauge, parts, width));
    this.shown = true;
  }
}

/** A part of the progress line, and how soon it gives way where the terminal is narrow (higher first; KEEP never). */
type Part = [text: string | undefined, drop: number];
const KEEP = 0;

/**
 * The line in one terminal row: a longer one would wrap, and the redraw would
 * leave its first half behind. Parts give way in their order (the place, the
 * gauge, the speed, ...), so that the count and the time left stay in view;
 * what is still too long is cut.
 */
function fit(gauge: string | undefined, parts: Part[], width: number): string {
  let shown = parts.filter((p): p is [string, number] => p[0] !== undefined && p[0] !== '');
  let withGauge = gauge !== undefined;
  const line = () => `${withGauge ? `${gauge} ` : ''}${shown.map(([text]) => text).join(' · ')}`;
  // The gauge says again what the share says: it goes first.
  const GAUGE_DROP = 6;
  while (line().length > width) {
    const most = Math.max(...shown.map(([, drop]) => drop));
    if (withGauge && GAUGE_DROP >= most) withGauge = false;
    else if (most > KEEP) shown = shown.filter(([, drop]) => drop !== most);
    else break;
  }
  const text = line();
  return text.length > width ? `${text.slice(0, width - 1)}…` : text;
}
