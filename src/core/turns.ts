import { abortError } from './generation';

/**
 * Turns at one engine that serves one request at a time (a model on this
 * device). A run asks for the turn before each step and gives it back once the
 * step is stored; turns go in the order they were asked for, so runs that are
 * all ready advance one step each, in rotation, and every memory moves on
 * together. A run that stops while it waits leaves the queue at once and holds
 * nobody up.
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
    if (signal?.aborted) return Promise.reject(abortError());
    return new Promise((resolve, reject) => {
      const grant = () => {
        signal?.removeEventListener('abort', onAbort);
        this.held = true;
        let given = false;
        resolve(() => {
          if (given) return;
          given = true;
          this.next();
        });
      };
      const onAbort = () => {
        const at = this.queue.indexOf(grant);
        if (at < 0) return;
        this.queue.splice(at, 1);
        reject(abortError());
      };
      if (!this.held) return grant();
      this.queue.push(grant);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  private next(): void {
    const grant = this.queue.shift();
    if (grant) grant();
    else this.held = false;
  }
}
