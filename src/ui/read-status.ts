import type { JobStatus } from './data';

/**
 * One status for the questions of a read, for its Pause, Resume and Cancel:
 * reading while any question reads; else paused, cancelled or failed while any
 * is (so Resume goes on with every question that can); done when all are.
 */
export function readStatus(statuses: readonly JobStatus[]): JobStatus {
  for (const status of ['running', 'paused', 'failed', 'cancelled'] as const) if (statuses.includes(status)) return status;
  return 'done';
}
