import { describe, expect, it } from 'vitest';
import { type BatchRequest, inFlight, inTurns, limitInFlight, StepBatcher } from '../src/core/batch';
import { abortError, type GenerateResult } from '../src/core/generation';
import { batchSender } from '../src/engines/batch-sender';

const reply = (text: string): GenerateResult => ({ text, finishReason: 'stop', usage: { promptTokens: 1, completionTokens: 1 } });
const ask = (text: string, signal?: AbortSignal): [BatchRequest['messages'], BatchRequest['options']] => [
  [{ role: 'user', content: text }],
  { maxTokens: 4, ...(signal && { signal }) },
];

/** A sender that records each batch it is given and answers when the test says. */
function heldSender() {
  const batches: string[][] = [];
  const waiting: (() => void)[] = [];
  const send = (requests: readonly BatchRequest[]) => {
    batches.push(requests.map((r) => r.messages[0]!.content));
    return new Promise<PromiseSettledResult<GenerateResult>[]>((resolve) =>
      waiting.push(() =>
        resolve(
          requests.map((r) =>
            r.messages[0]!.content.startsWith('bad')
              ? { status: 'rejected', reason: new Error(`no reply to ${r.messages[0]!.content}`) }
              : { status: 'fulfilled', value: reply(`re ${r.messages[0]!.content}`) },
          ),
        ),
      ),
    );
  };
  return { batches, send, answer: () => waiting.shift()!() };
}

const settle = () => new Promise((r) => setTimeout(r, 0));

describe('StepBatcher', () => {
  it('sends one batch once every member still reading has asked', async () => {
    const s = heldSender();
    const b = new StepBatcher(s.send);
    const [m1, m2, m3] = [b.join(), b.join(), b.join()];
    const r1 = m1.generate(...ask('a1'));
    const r2 = m2.generate(...ask('b1'));
    await settle();
    expect(s.batches).toEqual([]);
    const r3 = m3.generate(...ask('c1'));
    await settle();
    expect(s.batches).toEqual([['a1', 'b1', 'c1']]);
    s.answer();
    expect((await Promise.all([r1, r2, r3])).map((r) => r.text)).toEqual(['re a1', 're b1', 're c1']);
  });

  it('holds no more requests a batch than the smallest limit a member joined with, and more once that member has left', async () => {
    const s = heldSender();
    const b = new StepBatcher(s.send, 8);
    const [m1, m2, m3] = [b.join(4), b.join(4), b.join(2)];
    const asked = [m1.generate(...ask('a1')), m2.generate(...ask('b1')), m3.generate(...ask('c1'))];
    await settle();
    expect(s.batches).toEqual([['a1', 'b1']]);
    s.answer();
    await settle();
    expect(s.batches).toEqual([['a1', 'b1'], ['c1']]);
    s.answer();
    await Promise.all(asked);
    m3.leave();
    const again = [m1.generate(...ask('a2')), m2.generate(...ask('b2'))];
    await settle();
    expect(s.batches.at(-1)).toEqual(['a2', 'b2']);
    s.answer();
    await Promise.all(again);
  });

  it('a member that leaves no longer holds the others up', async () => {
    const s = heldSender();
    const b = new StepBatcher(s.send);
    const [m1, m2] = [b.join(), b.join()];
    const r1 = m1.generate(...ask('a1'));
    await settle();
    expect(s.batches).toEqual([]);
    m2.leave();
    await settle();
    expect(s.batches).toEqual([['a1']]);
    s.answer();
    expect((await r1).text).toBe('re a1');
  });

  it('a request that fails fails alone; the others get their replies', async () => {
    const s = heldSender();
    const b = new StepBatcher(s.send);
    const [m1, m2] = [b.join(), b.join()];
    const r1 = m1.generate(...ask('bad1'));
    const r2 = m2.generate(...ask('b1'));
    await settle();
    s.answer();
    await expect(r1).rejects.toThrow('no reply to bad1');
    expect((await r2).text).toBe('re b1');
  });

  it('a member stopped while it waits leaves at once with an AbortError, and the batch goes without it', async () => {
    const s = heldSender();
    const b = new StepBatcher(s.send);
    const [m1, m2, m3] = [b.join(), b.join(), b.join()];
    const stop = new AbortController();
    const r1 = m1.generate(...ask('a1', stop.signal));
    const r2 = m2.generate(...ask('b1'));
    stop.abort();
    await expect(r1).rejects.toMatchObject({ name: 'AbortError' });
    m1.leave();
    const r3 = m3.generate(...ask('c1'));
    await settle();
    expect(s.batches).toEqual([['b1', 'c1']]);
    s.answer();
    await Promise.all([r2, r3]);
  });

  it('more members than a batch holds are written in groups, one batch at a time, in the order they asked', async () => {
    const s = heldSender();
    const b = new StepBatcher(s.send, 2);
    const members = [b.join(), b.join(), b.join(), b.join(), b.join()];
    const step = (n: number) => members.map((m, i) => m.generate(...ask(`${'abcde'[i]}${n}`)));
    const first = step(1);
    await settle();
    expect(s.batches).toEqual([['a1', 'b1']]);
    s.answer();
    await settle();
    expect(s.batches.at(-1)).toEqual(['c1', 'd1']);
    s.answer();
    await settle();
    expect(s.batches.at(-1)).toEqual(['e1']);
    s.answer();
    expect((await Promise.all(first)).map((r) => r.text)).toEqual(['re a1', 're b1', 're c1', 're d1', 're e1']);
  });

  it('a sender that throws rejects every request of its batch; the next batch is still sent', async () => {
    let calls = 0;
    const b = new StepBatcher(async (requests) => {
      if (calls++ === 0) throw new Error('device lost');
      return requests.map((r) => ({ status: 'fulfilled' as const, value: reply(r.messages[0]!.content) }));
    });
    const [m1, m2] = [b.join(), b.join()];
    const failed = [m1.generate(...ask('a1')), m2.generate(...ask('b1'))];
    for (const f of failed) await expect(f).rejects.toThrow('device lost');
    expect((await Promise.all([m1.generate(...ask('a2')), m2.generate(...ask('b2'))])).map((r) => r.text)).toEqual(['a2', 'b2']);
  });
});

describe('senders for engines that do not batch', () => {
  it('inTurns writes the requests one after another, a failure settling only its own', async () => {
    const order: string[] = [];
    let open = 0;
    const send = inTurns({
      generate: async (messages) => {
        expect(open++).toBe(0);
        order.push(messages[0]!.content);
        await settle();
        open--;
        if (messages[0]!.content === 'bad') throw abortError();
        return reply(messages[0]!.content);
      },
    });
    const out = await send(['a', 'bad', 'c'].map((t) => ({ messages: ask(t)[0], options: ask(t)[1] })));
    expect(order).toEqual(['a', 'bad', 'c']);
    expect(out.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
  });

  it('inFlight has every request in flight together, up to its limit', async () => {
    const release: (() => void)[] = [];
    let open = 0;
    let most = 0;
    const send = inFlight(
      {
        generate: (messages) =>
          new Promise((resolve) => {
            most = Math.max(most, ++open);
            release.push(() => {
              open--;
              resolve(reply(messages[0]!.content));
            });
          }),
      },
      2,
    );
    const out = send(['a', 'b', 'c'].map((t) => ({ messages: ask(t)[0], options: ask(t)[1] })));
    await settle();
    expect(open).toBe(2);
    while (release.length) {
      release.shift()!();
      await settle();
    }
    expect((await out).map((r) => (r.status === 'fulfilled' ? r.value.text : ''))).toEqual(['a', 'b', 'c']);
    expect(most).toBe(2);
  });
});

describe('limitInFlight', () => {
  /** A generator whose calls each wait until the test answers them, counting those open. */
  function heldGenerator() {
    const open: { text: string; answer(): void; fail(): void }[] = [];
    let most = 0;
    const generator = {
      generate: (messages: BatchRequest['messages']) =>
        new Promise<GenerateResult>((resolve, reject) => {
          const text = messages[0]!.content;
          open.push({ text, answer: () => resolve(reply(text)), fail: () => reject(new Error(`${text} failed`)) });
          most = Math.max(most, open.length);
        }),
    };
    /** Settles the open call `text` and forgets it. */
    const settleCall = (text: string, how: 'answer' | 'fail' = 'answer') => {
      const at = open.findIndex((c) => c.text === text);
      open.splice(at, 1)[0]![how]();
    };
    return { generator, open, settleCall, most: () => most };
  }

  it('lets at most `limit` calls from separate callers run at once; the rest start in the order they came as turns end', async () => {
    const g = heldGenerator();
    const bounded = limitInFlight(g.generator, 2);
    // Settled together from the start: the failing one is looked at only at the end.
    const results = Promise.allSettled(['a', 'b', 'c', 'd'].map((t) => bounded.generate(...ask(t))));
    await settle();
    expect(g.open.map((c) => c.text)).toEqual(['a', 'b']);
    // A failed call ends its turn as an answered one does, and fails alone.
    g.settleCall('b', 'fail');
    await settle();
    expect(g.open.map((c) => c.text)).toEqual(['a', 'c']);
    g.settleCall('a');
    await settle();
    expect(g.open.map((c) => c.text)).toEqual(['c', 'd']);
    g.settleCall('c');
    g.settleCall('d');
    expect((await results).map((r) => (r.status === 'fulfilled' ? r.value.text : (r.reason as Error).message))).toEqual(['a', 'b failed', 'c', 'd']);
    expect(g.most()).toBe(2);
  });

  it('a call stopped while it waits its turn leaves the line with an AbortError, and the next in line takes the turn', async () => {
    const g = heldGenerator();
    const bounded = limitInFlight(g.generator, 1);
    const stop = new AbortController();
    const first = bounded.generate(...ask('a'));
    const stopped = bounded.generate(...ask('b', stop.signal));
    const third = bounded.generate(...ask('c'));
    await settle();
    stop.abort();
    await expect(stopped).rejects.toMatchObject({ name: 'AbortError' });
    g.settleCall('a');
    await settle();
    expect(g.open.map((c) => c.text)).toEqual(['c']);
    g.settleCall('c');
    expect((await first).text).toBe('a');
    expect((await third).text).toBe('c');
    expect(g.most()).toBe(1);
  });
});

describe('batchSender', () => {
  it('sends a batch of one as the engine’s own single request, and several through its batch', async () => {
    const calls: string[] = [];
    const engine = {
      id: 'test',
      contextWindow: 100,
      tokenizer: undefined as never,
      generate: async (messages: readonly { content: string }[]) => {
        calls.push(`one ${messages[0]!.content}`);
        return reply(messages[0]!.content);
      },
      generateBatch: async (requests: readonly BatchRequest[]) => {
        calls.push(`batch ${requests.map((r) => r.messages[0]!.content).join()}`);
        return requests.map((r) => ({ status: 'fulfilled' as const, value: reply(r.messages[0]!.content) }));
      },
    };
    const send = batchSender(engine);
    await send([{ messages: ask('a')[0], options: ask('a')[1] }]);
    await send(['b', 'c'].map((t) => ({ messages: ask(t)[0], options: ask(t)[1] })));
    expect(calls).toEqual(['one a', 'batch b,c']);
  });

  it('keeps a server engine’s requests of a step to its own requestsAtOnce, unless given a limit', async () => {
    let open = 0;
    let most = 0;
    const engine = {
      id: 'test',
      contextWindow: 100,
      tokenizer: undefined as never,
      parallel: true,
      requestsAtOnce: 2,
      generate: async (messages: readonly { content: string }[]) => {
        most = Math.max(most, ++open);
        await settle();
        open--;
        return reply(messages[0]!.content);
      },
    };
    const step = ['a', 'b', 'c', 'd', 'e'].map((t) => ({ messages: ask(t)[0], options: ask(t)[1] }));
    const out = await batchSender(engine)(step);
    expect(out.map((r) => (r.status === 'fulfilled' ? r.value.text : ''))).toEqual(['a', 'b', 'c', 'd', 'e']);
    expect(most).toBe(2);
    most = 0;
    await batchSender(engine, 3)(step);
    expect(most).toBe(3);
  });
});
