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
