import { sleep } from '../../core/abort';
import { abortError, isAbortError } from '../../core/generation';
import { CorsError, RetriesExhaustedError, ServerError, ServerUnreachableError } from '../errors';
import { isRetryableStatus } from './http';

export interface RetryPolicy {
  /** Failed attempts retried before the step gives up. */
  maxRetries: number;
  /** First wait; each later wait doubles, up to maxDelayMs. */
  baseDelayMs: number;
  maxDelayMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = { maxRetries: 8, baseDelayMs: 1000, maxDelayMs: 30_000 };

/** The longest Retry-After honoured. */
const MAX_HINTED_MS = 5 * 60_000;

export interface RetryNotice {
  /** 1 for the first retry. */
  attempt: number;
  delayMs: number;
  reason: string;
}

export interface Retrying {
  policy: RetryPolicy;
  signal?: AbortSignal;
  onRetry?(notice: RetryNotice): void;
}

function retryable(e: unknown): boolean {
  if (e instanceof CorsError) return false; // the browser will refuse again until the server's settings change
  return e instanceof ServerUnreachableError || (e instanceof ServerError && isRetryableStatus(e.status));
}

/**
 * `attempt` until it succeeds, waiting between tries (the server's
 * Retry-After, else a doubling backoff with jitter); resolves with the result
 * and the retries it took. A failure that another try cannot mend is thrown
 * as it is; once the retries run out, a RetriesExhaustedError whose `cause`
 * is the server's last error.
 */
export async function withRetries<T>(attempt: () => Promise<T>, { policy, signal, onRetry }: Retrying): Promise<{ result: T; retries: number }> {
  for (let retries = 0; ; retries++) {
    if (signal?.aborted) throw abortError();
    try {
      return { result: await attempt(), retries };
    } catch (e) {
      if (signal?.aborted || isAbortError(e)) throw abortError();
      if (!retryable(e)) throw e;
      const reason = (e as Error).message;
      if (retries >= policy.maxRetries) {
        throw new RetriesExhaustedError(`${reason} Gave up after ${retries + 1} attempt${retries ? 's' : ''}; the step that failed was not skipped.`, {
          cause: e,
        });
      }
      const backoff = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** retries) * (0.8 + 0.4 * Math.random());
      const hinted = e instanceof ServerError ? e.retryAfterMs : undefined;
      const delayMs = Math.round(hinted !== undefined ? Math.min(hinted, MAX_HINTED_MS) : backoff);
      onRetry?.({ attempt: retries + 1, delayMs, reason });
      await sleep(delayMs, signal);
    }
  }
}
