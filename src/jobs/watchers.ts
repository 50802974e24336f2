/**
 * The page's listeners on the worker, each under a handle the page gives back
 * to stop it. Handles come from a counter, never from the clock, so two made
 * in one millisecond are still two.
 */
export class Watchers {
  private next = 1;
  private readonly stops = new Map<number, () => void>();

  /** Keeps `stop` (what ends this listening) and returns its handle. */
  add(stop: () => void): number {
    const handle = this.next++;
    this.stops.set(handle, stop);
    return handle;
  }

  /** Stops and forgets the listener under `handle`; an unknown handle does nothing. */
  remove(handle: number): void {
    this.stops.get(handle)?.();
    this.stops.delete(handle);
  }

  get size(): number {
    return this.stops.size;
  }
}
