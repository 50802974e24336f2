import { abortable } from './abort';

/**
 * Turns at one thing that serves one holder at a time (a model on this
 * device, a GPU session): the one lock of the app. A run asks for the turn
 * before each step and gives it back once the step is stored; turns go in the
 * order they were asked for, so runs that are all ready advance one step each,
 * in rotation, and every memory moves on together. A run that stops while it
 * waits leaves the queue at once (with an AbortError) and holds nobody up.
 */
export class Turns {
  private held = false;
  private readonly queue: (() => void)[] = [];

  /** Runs waiting for the turn (not counting the one holding it). */
  get waiting(): number {
    return this.queue.length;
  }

  /** Waits for the turn; resolves with the function that gives it back (a second call does nothing). */
  take(signal?: AbortSignal): Promise<() => void> {
    return abortable<() => void>(signal, (resolve) => {
      const grant = () => {
        this.held = true;
        let given = false;
        resolve(() => {
          if (given) return;
          given = true;
          this.next();
        });
      };
      if (!this.held) grant();
      else this.queue.push(grant);
      return () => {
        const at = this.queue.indexOf(grant);
        if (at >= 0) this.queue.splice(at, 1);
      };
    });
  }

  private next(): void {
    const grant = this.queue.shift();
    if (grant) grant();
    else this.held = false;
  }
}
