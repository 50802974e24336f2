// Only the worker's entry imports this module: code it shared with a chunk would make that chunk import the entry.
/** Set on the worker's global scope once the services have started. */
export const STARTED = Symbol.for('memagent.agent-services');

type Scope = { [STARTED]?: true };

/**
 * Starts the worker's services unless this scope has started them already: a second evaluation of the
 * entry (an engine that runs the main script twice) is then harmless, and logged so that it is seen.
 * Returns whether it started them.
 */
export function startOnce(scope: object, start: () => Promise<unknown>, log: (message: string) => void = console.error): boolean {
  const s = scope as Scope;
  if (s[STARTED]) {
    log('The agent worker was evaluated a second time; its services already run, so this evaluation starts nothing.');
    return false;
  }
  s[STARTED] = true;
  void start().catch((e: unknown) => log(`The agent worker could not start: ${e instanceof Error ? e.message : String(e)}`));
  return true;
}
