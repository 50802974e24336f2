import { type RefObject, useLayoutEffect, useRef } from 'react';

/**
 * The first change of a memory is what "Memory changes" is opened for: each
 * time `diff` is drawn, the pane holding the element given the returned ref
 * (its parent, which scrolls) is scrolled to show it near the pane's top,
 * with a little of what comes before. Only the pane scrolls: the page stays
 * where the person put it.
 */
export function useFirstChange(diff: unknown): RefObject<HTMLModElement | null> {
  const first = useRef<HTMLModElement>(null);
  useLayoutEffect(() => {
    const change = first.current;
    const pane = change?.parentElement;
    if (!change || !pane) return;
    const above = change.getBoundingClientRect().top - pane.getBoundingClientRect().top;
    pane.scrollTop = Math.max(0, pane.scrollTop + above - pane.clientHeight / 5);
  }, [diff]);
  return first;
}
