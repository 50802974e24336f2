import type { JobStatus } from './data';

/**
 * Reads a job (a run, a sweep) back from storage when its events say that
 * something changed. Events only say that; what changed is read in batches:
 * a burst of events costs one read 30 ms later, one read runs at a time (one
 * asked for meanwhile follows it), and nothing is read once closed.
 */
export class StoredView {
  private timer: ReturnType<typeof setTimeout> | undefined;
  private loading = false;
  private again = false;
  private closed = false;

  /** `read` reads what changed and shows it; it is not called after close. */
  constructor(private readonly read: () => Promise<void>) {}

  /** Reads now, or as soon as the read in progress ends. */
  async refresh(): Promise<void> {
    if (this.closed) return;
    if (this.loading) {
      this.again = true;
      return;
    }
    this.loading = true;
    try {
      await this.read();
    } finally {
      this.loading = false;
    }
    if (this.again && !this.closed) {
      this.again = false;
      void this.refresh();
    }
  }

  /** Reads a moment from now, once for all the events until then. */
  soon(): void {
    this.timer ??= setTimeout(() => {
      this.timer = undefined;
      void this.refresh();
    }, 30);
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.timer);
  }

  get open(): boolean {
    return !this.closed;
  }
}

/** A stop heard from the worker with its reason; kept because its own write may not have fit (a full disk). */
export interface HeardStop {
  status: JobStatus;
  error: string;
}

/** What a status event says about a stop: the reason, when it came with one, or nothing. */
export function heardStop(event: { status: JobStatus; error?: string }): HeardStop | null {
  return event.error && event.status !== 'running' ? { status: event.status, error: event.error } : null;
}

/** A job as stored, or as it stands after a stop whose write did not fit: storage still says running. */
export function withHeardStop<T extends { status: JobStatus; error?: string }>(stored: T | null, stop: HeardStop | null): T | null {
  return stored && stop && stored.status === 'running' ? { ...stored, ...stop } : stored;
}
