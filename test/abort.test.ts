import { describe, expect, it } from 'vitest';
import { abortable, retryAfterMs, sleep, untilAborted } from '../src/core/abort';
import { isAbortError } from '../src/core/generation';

/** A signal that counts the abort listeners still registered on it. */
function countedSignal(): { controller: AbortController; listeners: () => number } {
  const controller = new AbortController();
  let n = 0;
  const add = controller.signal.addEventListener.bind(controller.signal);
  const remove = controller.signal.removeEventListener.bind(controller.signal);
  controller.signal.addEventListener = ((...args: Parameters<typeof add>) => (n++, add(...args))) as typeof add;
  controller.signal.removeEventListener = ((...args: Parameters<typeof remove>) => (n--, remove(...args))) as typeof remove;
  return { controller, listeners: () => n };
}

describe('abort helpers', () => {
  it('every helper stopped by its signal rejects with an AbortError, whatever reason the signal carries', async () => {
    const controller = new AbortController();
    const waits = [sleep(60_000, controller.signal), untilAborted(new Promise<never>(() => undefined), controller.signal)];
    controller.abort(new Error('some other reason'));
    for (const wait of waits) {
      const e = await wait.catch((x: unknown) => x);
      expect(isAbortError(e)).toBe(true);
      expect((e as Error).message).toBe('The run was stopped.');
    }
    await expect(sleep(1, controller.signal)).rejects.toMatchObject({ name: 'AbortError' });
  });

  it('a wait that ends by itself leaves no listener on the signal', async () => {
    const { controller, listeners } = countedSignal();
    await sleep(1, controller.signal);
    await untilAborted(Promise.resolve(7), controller.signal);
    await expect(untilAborted(Promise.reject(new Error('broke')), controller.signal)).rejects.toThrow('broke');
    expect(listeners()).toBe(0);
  });

  it('an abort undoes what the wait started, once', async () => {
    const controller = new AbortController();
    let undone = 0;
    const wait = abortable(controller.signal, () => () => undone++);
    controller.abort();
    controller.abort();
    await expect(wait).rejects.toMatchObject({ name: 'AbortError' });
    expect(undone).toBe(1);
  });

  it('a wait settled at once by its start resolves and never undoes', async () => {
    const { controller, listeners } = countedSignal();
    let undone = 0;
    await expect(abortable<number>(controller.signal, (resolve) => (resolve(3), () => undone++))).resolves.toBe(3);
    controller.abort();
    expect(undone).toBe(0);
    expect(listeners()).toBe(0);
  });

  it('reads Retry-After as seconds or as an HTTP date', () => {
    const now = Date.parse('Tue, 01 Dec 2026 10:00:00 GMT');
    expect(retryAfterMs('120', now)).toBe(120_000);
    expect(retryAfterMs('1.5', now)).toBe(1_500);
    expect(retryAfterMs('Tue, 01 Dec 2026 10:00:30 GMT', now)).toBe(30_000);
    expect(retryAfterMs('Tue, 01 Dec 2026 09:00:00 GMT', now)).toBe(0);
    expect(retryAfterMs('soon', now)).toBeUndefined();
    expect(retryAfterMs(null, now)).toBeUndefined();
  });
});
