import type { JobStatus } from './data';

/** A Pause or Cancel pressed and not yet stored: which one, and the status it was pressed in. */
export interface PendingControl {
  action: 'pause' | 'cancel';
  from: JobStatus;
}

/**
 * The control still waiting once storage says `status`: until the job's
 * stored status moves from the one it was pressed in, the button says
 * "Pausing…" or "Cancelling…"; a job that moved (paused, cancelled, done,
 * failed, or resumed elsewhere) has answered it.
 */
export function stillPending(pending: PendingControl | null, status: JobStatus): PendingControl | null {
  return pending && pending.from === status ? pending : null;
}
