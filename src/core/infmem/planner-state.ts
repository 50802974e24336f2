/**
 * What the planner is shown and how its votes stop a read: the retrieval
 * history text, and the stop counter that carries across chunks.
 */
import { pyReprString } from './py-values';

/** Three votes in a row stop a read, as the official evaluation runs it ("3-stop"). */
export const DEFAULT_EARLY_STOP = 3;

/**
 * The `{retrieval_history}` text before chunk `index` (0-based) of `total`:
 * a header line (always ending in a newline, even with no history) and one
 * line per retrieval so far, the query as Python's repr prints it.
 */
export function historyText(index: number, total: number, history: readonly { query: string; topK: string }[]): string {
  const header = `Current retrieval step: ${index + 1}  Maximum allowed retrieval steps: ${total}\n`;
  return header + history.map((h, i) => `Step ${i + 1}: query=${pyReprString(h.query)}, top_k=${h.topK}`).join('\n');
}

/**
 * The official stop counter: a reply without STOP resets it, then a STOP or
 * a reply with no call adds one; the read ends, before the current chunk is
 * written, once it reaches `limit`. It is not reset between chunks.
 */
export class StopCounter {
  private count: number;

  /** `votes`: the count a resumed read had reached. */
  constructor(
    readonly limit: number = DEFAULT_EARLY_STOP,
    votes = 0,
  ) {
    if (!Number.isInteger(limit) || limit < 1) throw new RangeError(`The early stop must be a whole number of at least 1, not ${limit}.`);
    this.count = votes;
  }

  /** Counts one planner reply; true when the read stops here. */
  vote(stop: boolean, calls: number): boolean {
    if (!stop) this.count = 0;
    if (stop || calls === 0) this.count++;
    return this.count >= this.limit;
  }

  get votes(): number {
    return this.count;
  }
}
