/** Set on the worker's global scope once the worker's API answers messages. */
export const EXPOSED = Symbol.for('memagent.agent-exposed');

/**
 * Exposes the API on this scope once: a second expose would answer every request twice.
 * Returns whether it exposed it.
 */
export function exposeOnce(scope: object, expose: () => void, log: (message: string) => void = console.error): boolean {
  const s = scope as { [EXPOSED]?: true };
  if (s[EXPOSED]) {
    log('The agent worker API is exposed already; a second expose would answer each request twice, so it is skipped.');
    return false;
  }
  s[EXPOSED] = true;
  expose();
  return true;
}
