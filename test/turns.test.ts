import { describe, expect, it } from 'vitest';
import { Turns } from '../src/core/turns';

const tick = () => new Promise((r) => setTimeout(r, 0));

describe('Turns', () => {
  it('gives the turn in the order it was asked for, one holder at a time', async () => {
    const turns = new Turns();
    const order: string[] = [];
    const give = await turns.take();
    const b = turns.take().then((g) => (order.push('b'), g));
    const c = turns.take().then((g) => (order.push('c'), g));
    await tick();
    expect(order).toEqual([]);
    expect(turns.waiting).toBe(2);
    give();
    const giveB = await b;
    await tick();
    expect(order).toEqual(['b']);
    giveB();
    giveB(); // a second give-back is ignored: it must not hand on c's turn
    (await c)();
    expect(order).toEqual(['b', 'c']);
    expect(turns.waiting).toBe(0);
  });

  it('runs that are all ready advance a step each, in rotation', async () => {
    const turns = new Turns();
    const steps: string[] = [];
    const reader = async (name: string, n: number) => {
      for (let i = 0; i < n; i++) {
        const give = await turns.take();
        steps.push(`${name}${i}`);
        await tick(); // the step and its commit take time while the turn is held
        give();
      }
    };
    await Promise.all([reader('a', 3), reader('b', 3), reader('c', 2)]);
    expect(steps).toEqual(['a0', 'b0', 'c0', 'a1', 'b1', 'c1', 'a2', 'b2']);
  });

  it('a run that stops while it waits leaves the queue, and the others go on', async () => {
    const turns = new Turns();
    const give = await turns.take();
    const stop = new AbortController();
    const stopped = turns.take(stop.signal);
    const next = turns.take();
    stop.abort();
    await expect(stopped).rejects.toMatchObject({ name: 'AbortError' });
    expect(turns.waiting).toBe(1);
    give();
    (await next)();
    // A stopped signal is refused at once, and the turn is free again.
    await expect(turns.take(stop.signal)).rejects.toMatchObject({ name: 'AbortError' });
    (await turns.take())();
  });
});
