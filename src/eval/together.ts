import { type BatchSender, StepBatcher } from '../core/batch';
import type { TextGenerator } from '../core/generation';

/** How an evaluation reads several samples at once: their steps written together by `send`, at most `size` in one batch. */
export interface Together {
  send: BatchSender;
  size: number;
}

/**
 * Reads every item, yielding each result as it is ready. Without `together`
 * (or with a size of 1) the items are read one at a time, in order, with the
 * reader's own generator (`undefined`). With it, `size` readers take items
 * off one queue, each through its own member of one StepBatcher, so their
 * steps go out as one batch; a reader that finishes its item takes the next
 * at once, so the batch stays full while items of different lengths end at
 * different steps. A read that throws stops the others from taking more;
 * the rest are let finish before the error is thrown. A caller that stops
 * listening (a failed store) has the readers finish the items in hand and
 * take no more.
 */
export async function* readTogether<T, R>(
  items: Iterable<T> | AsyncIterable<T>,
  together: Together | undefined,
  read: (item: T, generator: TextGenerator | undefined) => Promise<R>,
): AsyncGenerator<R, void, void> {
  const size = Math.max(1, Math.floor(together?.size ?? 1));
  if (!together || size === 1) {
    for await (const item of items) yield await read(item, undefined);
    return;
  }
  const source = Symbol.asyncIterator in items ? items[Symbol.asyncIterator]() : items[Symbol.iterator]();
  const batch = new StepBatcher(together.send, size);
  const ready: R[] = [];
  let wake: (() => void) | undefined;
  let failure: { error: unknown } | undefined;
  /** Set when the caller stops listening: no reader takes another item. */
  let closed = false;
  const tell = () => {
    wake?.();
    wake = undefined;
  };
  const reader = async () => {
    const member = batch.join(size);
    try {
      while (!failure && !closed) {
        const next = await source.next();
        if (next.done || failure || closed) return;
        ready.push(await read(next.value, member));
        tell();
      }
    } catch (error) {
      failure ??= { error };
    } finally {
      member.leave();
    }
  };
  let running = true;
  const readers = Promise.all(Array.from({ length: size }, reader)).then(() => {
    running = false;
    tell();
  });
  try {
    while (running || ready.length) {
      if (ready.length) yield ready.shift()!;
      else await new Promise<void>((resolve) => (wake = resolve));
    }
  } finally {
    closed = true;
    await readers;
  }
  if (failure) throw failure.error;
}
