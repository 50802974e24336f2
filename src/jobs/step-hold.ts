import { abortable } from '../core/abort';
import type { HoldMessage } from '../agent/events';

/**
 * The worker's side of the hold channel (see HoldMessage): runs wait here
 * before a step while a page holds that step, so that a test can reload,
 * pause or close a tab while a run has that step in hand, on any machine. With
 * no hold posted, a step goes on at once.
 */
export class StepHold {
  /** Steps from this index on wait; null: none does. */
  private gate: number | null = null;
  private readonly waiting = new Set<{ index: number; go(): void }>();

  constructor(private readonly post: (message: HoldMessage) => void) {}

  /** A message from the hold channel. */
  hear(message: HoldMessage): void {
    if (message.type === 'hold') this.gate = message.index;
    else if (message.type === 'release') this.gate = null;
    else return;
    for (const waiter of [...this.waiting]) if (!this.holds(waiter.index)) waiter.go();
    if (message.type === 'hold') this.post({ type: 'holding', index: message.index });
  }

  /** Resolves when run `runId` may generate its step at `index`; rejects with an abort error if `signal` stops the run first. */
  before(runId: string, index: number, signal: AbortSignal): Promise<void> | undefined {
    if (!this.holds(index)) return undefined;
    return abortable<void>(signal, (resolve) => {
      const waiter = {
        index,
        go: () => {
          this.waiting.delete(waiter);
          resolve();
        },
      };
      this.waiting.add(waiter);
      this.post({ type: 'held', runId, index });
      return () => this.waiting.delete(waiter);
    });
  }

  private holds(index: number): boolean {
    return this.gate !== null && index >= this.gate;
  }
}
