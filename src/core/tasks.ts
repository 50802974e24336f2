/**
 * Yields to the event loop so that queued work (a reading step, a message, a
 * storage callback) runs before the next slice of a long job. Background
 * slices go behind everything else where the browser's task scheduler exists;
 * in node setImmediate does (after pending I/O and signals, without a timer's
 * 1 ms floor, which would double a fast step); elsewhere a timer.
 */
export function nextTask(priority: 'user-visible' | 'background' = 'user-visible'): Promise<void> {
  const scheduler = (globalThis as { scheduler?: { postTask?(task: () => void, options: { priority: string }): Promise<void> } }).scheduler;
  if (scheduler?.postTask) return scheduler.postTask(() => undefined, { priority });
  if (typeof setImmediate === 'function') return new Promise((resolve) => setImmediate(resolve));
  return new Promise((resolve) => setTimeout(resolve, 0));
}
