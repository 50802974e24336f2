import { beforeAll, describe, expect, it } from 'vitest';
import type { HoldMessage } from '../src/agent/events';
import { ExtractiveEngine } from '../src/engines/extractive/engine';
import { loadQwenTokenizer, type QwenTokenizer } from '../src/engines/qwen-tokenizer';
import { StepHold } from '../src/jobs/step-hold';
import { corpusText } from './helpers';
import { testRunner, until } from './runner-setup';

let tok: QwenTokenizer;
beforeAll(async () => {
  tok = await loadQwenTokenizer();
});

/** A hold as the worker wires it, with what it posted back to the pages. */
function hold() {
  const posted: HoldMessage[] = [];
  return { hold: new StepHold((m) => posted.push(m)), posted };
}

describe('the step hold', () => {
  it('lets every step go while nothing is held', () => {
    const { hold: h, posted } = hold();
    expect(h.before('r', 0, new AbortController().signal)).toBeUndefined();
    expect(posted).toEqual([]);
  });

  it('holds steps from the held index on, says so, and moving the gate or releasing it lets them go', async () => {
    const { hold: h, posted } = hold();
    h.hear({ type: 'hold', index: 2 });
    expect(posted).toEqual([{ type: 'holding', index: 2 }]);
    expect(h.before('r', 1, new AbortController().signal)).toBeUndefined();
    let went = false;
    const waiting = h.before('r', 2, new AbortController().signal)!.then(() => (went = true));
    expect(posted.at(-1)).toEqual({ type: 'held', runId: 'r', index: 2 });
    await Promise.resolve();
    expect(went).toBe(false);
    h.hear({ type: 'hold', index: 4 }); // the gate moves on past the waiting step
    await waiting;
    expect(h.before('r', 4, new AbortController().signal)).toBeInstanceOf(Promise);
    h.hear({ type: 'release' });
    expect(h.before('r', 9, new AbortController().signal)).toBeUndefined();
  });

  it('drops a held step when its run stops', async () => {
    const { hold: h } = hold();
    h.hear({ type: 'hold', index: 0 });
    const stop = new AbortController();
    const waiting = h.before('r', 0, stop.signal)!;
    stop.abort();
    await expect(waiting).rejects.toMatchObject({ name: 'AbortError' });
  });

  it('stops a run before the held chunk: Pause there stores every chunk before it and nothing of it', async () => {
    const { hold: h, posted } = hold();
    const { library, runner, store } = await testRunner(new ExtractiveEngine(tok), tok, { hold: h });
    const doc = await library.ingest('book.txt', new TextEncoder().encode(corpusText('frankenstein.txt').slice(0, 30_000)), 'extractive');
    h.hear({ type: 'hold', index: 3 });
    const runId = await runner.start({ documentId: doc.id, question: 'Who wrote the letters?', engineId: 'extractive', chunkTokens: 500, memoryTokens: 128 });
    await until(() => posted.some((m) => m.type === 'held'));
    expect(posted.at(-1)).toEqual({ type: 'held', runId, index: 3 });
    await runner.jobs.pause(runId);
    await runner.jobs.settled(runId);
    expect(await store.getRun(runId)).toMatchObject({ status: 'paused', nextChunk: 3 });
    expect((await store.listRevisions(runId)).map((r) => r.index)).toEqual([0, 1, 2]);
  });
});
