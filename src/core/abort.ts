import { abortError } from './generation';

/*
 * Waiting that a stop can cut short. One convention for everything here: a
 * wait that ends because its signal aborted rejects with `abortError()` (an
 * Error named AbortError, as fetch throws), never with the signal's reason, so
 * callers test one thing (`isAbortError`) whatever stopped them.
 */

/**
 * A promise that `start` settles, or that rejects with an AbortError once
 * `signal` aborts; `start` returns what to undo then (a timer to clear, a
 * queue place to leave). The abort listener is gone once the promise settles.
 */
export function abortable<T>(
  signal: AbortSignal | undefined,
  start: (resolve: (value: T) => void, reject: (error: unknown) => void) => () => void,
): Promise<T> {
  if (signal?.aborted) return Promise.reject(abortError());
  return new Promise<T>((resolve, reject) => {
    let settled = false;
    let listening = false;
    const onAbort = () => {
      if (settled) return;
      settled = true;
      undo();
      reject(abortError());
    };
    const settle =
      <A>(finish: (a: A) => void) =>
      (a: A) => {
        if (settled) return;
        settled = true;
        if (listening) signal?.removeEventListener('abort', onAbort);
        finish(a);
      };
    const undo = start(settle(resolve), settle(reject));
    if (settled || !signal) return;
    signal.addEventListener('abort', onAbort, { once: true });
    listening = true;
  });
}

/** `work`'s result, or an AbortError as soon as `signal` aborts (the work itself goes on). */
export function untilAborted<T>(work: Promise<T>, signal?: AbortSignal): Promise<T> {
  if (!signal) return work;
  return abortable<T>(signal, (resolve, reject) => {
    work.then(resolve, reject);
    return () => undefined;
  });
}

/** Waits `ms` milliseconds; an abort ends the wait early with an AbortError. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return abortable<void>(signal, (resolve) => {
    if (ms <= 0) {
      resolve();
      return () => undefined;
    }
    const timer = setTimeout(resolve, ms);
    return () => clearTimeout(timer);
  });
}

/** A Retry-After header (delta-seconds or an HTTP date) as milliseconds from `now`; undefined where absent or unreadable. */
export function retryAfterMs(value: string | null | undefined, now = Date.now()): number | undefined {
  const text = value?.trim();
  if (!text) return undefined;
  if (/^\d+(\.\d+)?$/.test(text)) return Number(text) * 1000;
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}
