/**
 * What a read of several questions prints on stdout: each question's answer
 * in the questions' order, as soon as it and every one before it are settled.
 */
import type { JournalHeader } from './journal';
import { formatSources, type ReadSources } from './sources';

/** How one question's read ended. */
export type Outcome = { kind: 'answer'; answer: string; sources: ReadSources } | { kind: 'failed'; error: string } | { kind: 'stopped' };

/** One question of a read of several, as it goes. */
export interface Question {
  /** Its number, from 1, as its journal's name and the output give it. */
  n: number;
  path: string;
  header: JournalHeader;
  /** Every revision's memory, for tracing the answer's sources through them. */
  memories: string[];
  /** Chunks read. */
  step: number;
  outcome?: Outcome;
}

/**
 * The answers under their questions with their sources in words, or with
 * --json one JSON line per question: an answer as a read of one question
 * prints it, `{"type":"failed",…}` for a question that failed. A stopped
 * question prints nothing: the whole read stopped.
 */
export class OrderedOutput {
  private readonly order: InOrder<Question>;

  constructor(
    questions: readonly Question[],
    private readonly total: number,
    private readonly json: boolean,
    private readonly write: (text: string) => void,
  ) {
    this.order = new InOrder(questions, (q) => this.print(q, q.outcome!));
  }

  settle(q: Question, outcome: Outcome): void {
    this.order.settle(q, outcome);
  }

  private print(q: Question, o: Outcome): void {
    const question = q.header.question;
    if (o.kind === 'stopped') return;
    if (this.json) {
      const line =
        o.kind === 'answer'
          ? { type: 'answer', question, answer: o.answer, sources: o.sources }
          : { type: 'failed', question, error: o.error, journal: q.path };
      this.write(`${JSON.stringify(line)}\n`);
      return;
    }
    const body = o.kind === 'answer' ? `${o.answer}\n${formatSources(o.sources, this.total)}` : `No answer: ${o.error}\n`;
    this.write(`${q.n > 1 ? '\n' : ''}Question ${q.n}: ${question}\n${body}`);
  }
}

/** Items settled in any order, handed on in theirs: each once it and every one before it are settled. */
export class InOrder<T extends { outcome?: unknown }> {
  private next = 0;

  constructor(
    private readonly items: readonly T[],
    private readonly hand: (item: T) => void,
  ) {}

  settle(item: T, outcome: NonNullable<T['outcome']>): void {
    item.outcome = outcome;
    for (let at = this.items[this.next]; at?.outcome; at = this.items[++this.next]) this.hand(at);
  }
}
