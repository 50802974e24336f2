import { type RefObject, useCallback, useEffect, useRef } from 'react';

/**
 * After Read, focus goes to the run it started, once the run is drawn: its
 * heading (the question) in the run's column, so that a keyboard or screen
 * reader user is where the read is, not back at the top of the page.
 */
export function useFocusRun(shownId: string | undefined, runColumn: RefObject<HTMLDivElement | null>): (runId: string) => void {
  const pending = useRef<string | null>(null);
  useEffect(() => {
    if (!shownId || shownId !== pending.current) return;
    pending.current = null;
    const column = runColumn.current;
    (column?.querySelector<HTMLElement>('h2[tabindex]') ?? column)?.focus({ preventScroll: true });
  }, [shownId, runColumn]);
  return useCallback((runId: string) => {
    pending.current = runId;
  }, []);
}
