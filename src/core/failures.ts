/*
 * Failures nobody waits on. A promise left to itself that rejects is reported
 * as uncaught; these say in code what becomes of the failure instead. A bare
 * `.catch(() => undefined)` is allowed only beside a comment that says why
 * losing the failure is fine (test/silent-catches.test.ts holds that).
 */

/** A rejection handler for background work: the work goes on, and the console says what failed (for whoever debugs it). */
export function warnFailure(what: string): (error: unknown) => void {
  return (error) => console.warn(`${what} failed:`, error);
}

/**
 * `listener`, called so that its failure never reaches the work that tells it:
 * a listener is often a proxy into a tab that may have closed, and one that is
 * gone just stops hearing.
 */
export function tellQuietly<A extends unknown[]>(listener: ((...args: A) => unknown) | undefined): (...args: A) => void {
  return (...args) => {
    if (!listener) return;
    // A listener that rejects or has gone loses only its own news.
    void Promise.resolve(listener(...args)).catch(() => undefined);
  };
}

/**
 * Runs `work`, then `cleanup` however it ends. Where `work` threw, its
 * failure is the one thrown: a cleanup that then fails too is logged with
 * `what` (its state is the work's failure's consequence), never thrown in its
 * place. After work that succeeded, a cleanup's failure is thrown.
 */
export function cleanUpAfter<T>(what: string, work: () => T, cleanup: () => void): T {
  let result: T;
  try {
    result = work();
  } catch (error) {
    cleanUpQuietly(what, cleanup);
    throw error;
  }
  cleanup();
  return result;
}

/** Runs `cleanup` after a failure that is the one to report: its own failure is logged with `what`. */
export function cleanUpQuietly(what: string, cleanup: () => void): void {
  try {
    cleanup();
  } catch (failure) {
    warnFailure(what)(failure);
  }
}
