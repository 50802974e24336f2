import { beforeAll, describe, expect, it } from 'vitest';
import type { ChatMessage, GenerateOptions, GenerateResult } from '../src/core/generation';
import type { Tokenizer } from '../src/core/tokenizer';
import type { Engine } from '../src/engines/engine';
import { ExtractiveEngine } from '../src/engines/extractive/engine';
import { loadQwenTokenizer, type QwenTokenizer } from '../src/engines/qwen-tokenizer';
import type { RunRequest } from '../src/agent/protocol';
import { RequestError } from '../src/jobs/request-error';
import { corpusText } from './helpers';
import { GatedEngine } from './gated-engine';
import { testRunner, until } from './runner-setup';
import type { RunEvent } from '../src/agent/protocol';
import { questionSeed } from '../src/core/plan';

const NEEDLE = 'The vault code for the Marlowe archive is 4829137.';
const SECOND = 'The ferry to Carrow Island leaves from pier 17.';
const QUESTIONS = ['What is the vault code for the Marlowe archive?', 'From which pier does the ferry to Carrow Island leave?'];

let tok: QwenTokenizer;
let book: Uint8Array<ArrayBuffer>;

beforeAll(async () => {
  tok = await loadQwenTokenizer();
  const text = corpusText('frankenstein.txt').slice(80_000, 110_000);
  const a = text.indexOf('. ', 9_000) + 2;
  const b = text.indexOf('. ', 21_000) + 2;
  book = new TextEncoder().encode(`${text.slice(0, a)}${SECOND} ${text.slice(a, b)}${NEEDLE} ${text.slice(b)}`);
});

/** An engine over the extractive one that counts the requests in flight and how often the book is cut into pieces. */
class CountingEngine implements Engine {
  readonly id = 'extractive';
  readonly inner: ExtractiveEngine;
  readonly contextWindow: number;
  readonly tokenizer: Tokenizer & { cuts: number };
  inFlight = 0;
  maxInFlight = 0;
  /** The seeds each question's requests carried, by question. */
  readonly seeds = new Map<string, Set<number | undefined>>();

  /** With `meet`, calls wait until that many are in flight at once (then none waits again). */
  private met: (() => void)[] = [];

  constructor(
    tokenizer: QwenTokenizer,
    readonly parallel = false,
    private readonly meet = 0,
  ) {
    this.inner = new ExtractiveEngine(tokenizer);
    this.contextWindow = this.inner.contextWindow;
    const counting = {
      name: tokenizer.name,
      cuts: 0,
      encode: (s: string) => tokenizer.encode(s),
      decode: (ids: readonly number[]) => tokenizer.decode(ids),
      count: (s: string) => tokenizer.count(s),
      pieces: (s: string) => {
        counting.cuts++;
        return tokenizer.pieces(s);
      },
    };
    this.tokenizer = counting;
  }

  async generate(messages: readonly ChatMessage[], options: GenerateOptions): Promise<GenerateResult> {
    const question = QUESTIONS.find((q) => messages.some((m) => m.content.includes(q))) ?? '';
    this.seeds.set(question, (this.seeds.get(question) ?? new Set()).add(options.seed));
    this.maxInFlight = Math.max(this.maxInFlight, ++this.inFlight);
    try {
      if (this.maxInFlight < this.meet) await new Promise<void>((resolve) => this.met.push(resolve));
      else for (const go of this.met.splice(0)) go();
      return await this.inner.generate(messages, options);
    } finally {
      this.inFlight--;
    }
  }
}

function request(documentId: string): Omit<RunRequest, 'question'> {
  return { documentId, engineId: 'extractive', chunkTokens: 300, memoryTokens: 128 };
}

const range = (n: number) => [...Array(n).keys()];

async function setup(engine: Engine) {
  const t = await testRunner(engine, tok);
  const doc = await t.library.ingest('book.txt', book, 'extractive');
  const ended = (runId: string) =>
    until(() => t.events.some((e) => e.type === 'status' && e.runId === runId && (e.status === 'done' || e.status === 'failed')));
  return { ...t, doc, ended };
}

/** The order revisions were committed in, as run letters: "abab…". */
function commitOrder(events: RunEvent[], ids: string[]): string {
  return events.flatMap((e) => (e.type === 'revision' ? ['ab'[ids.indexOf(e.runId)]] : [])).join('');
}

describe('several questions about one book', () => {
  it('on a local engine the runs take turns a step each, over one chunk list cut once, and each answers its own question with its own seed', async () => {
    const engine = new CountingEngine(tok);
    const { store, events, runner, doc, ended } = await setup(engine);
    engine.tokenizer.cuts = 0;
    const ids = await runner.startMany({ ...request(doc.id), seed: 7 }, QUESTIONS);
    await Promise.all(ids.map(ended));

    const [a, b] = await Promise.all(ids.map(async (id) => (await store.getRun(id))!));
    expect(a!.chunks.length).toBeGreaterThan(10);
    expect(b!.chunks).toEqual(a!.chunks);
    expect(engine.tokenizer.cuts).toBe(1);
    expect(engine.maxInFlight).toBe(1);
    // Rotation: every question's memory moves on together (a run may start a step ahead while the other one starts).
    const n = a!.chunks.length;
    const order = commitOrder(events, ids);
    expect(order.length).toBe(2 * n);
    expect(Math.max(...[...order].map((_, i) => Math.abs(2 * [...order.slice(0, i + 1)].filter((c) => c === 'a').length - (i + 1))))).toBeLessThanOrEqual(2);
    expect(order).toContain('ab'.repeat(n - 2));
    for (const id of ids) expect((await store.listRevisions(id)).map((r) => r.index)).toEqual(range(n));
    expect(a).toMatchObject({ status: 'done', question: QUESTIONS[0] });
    expect(a!.answer).toContain('4829137');
    expect(b).toMatchObject({ status: 'done', question: QUESTIONS[1] });
    expect(b!.answer).toContain('pier 17');
    // The first question samples with the read's seed, the second with its own, in every request.
    expect(a!.settings.seed).toBe(7);
    expect(b!.settings.seed).toBe(questionSeed(7, 1));
    expect(b!.settings.seed).not.toBe(7);
    expect(engine.seeds.get(QUESTIONS[0]!)).toEqual(new Set([7]));
    expect(engine.seeds.get(QUESTIONS[1]!)).toEqual(new Set([questionSeed(7, 1)]));
    // Listed newest first, in the questions' order.
    expect((await store.listRuns()).map((r) => r.id)).toEqual(ids);
  });

  it('pausing one run lets the other read on to its answer; the paused one resumes to done, each chunk stored once', async () => {
    // The second question's fourth step waits until the test lets it go: the pause comes while it is read.
    const engine = new GatedEngine(tok);
    let asked = 0;
    engine.holdIf = (messages) => messages.some((m) => m.content.includes(QUESTIONS[1]!)) && ++asked === 4;
    const { store, runner, doc, ended } = await setup(engine);
    const [a, b] = (await runner.startMany(request(doc.id), QUESTIONS)) as [string, string];
    await engine.held;
    await runner.jobs.pause(b);
    engine.open();
    expect(await engine.settled).toMatchObject({ name: 'AbortError' });
    await ended(a);
    const paused = (await store.getRun(b))!;
    const done = (await store.getRun(a))!;
    expect(done.status).toBe('done');
    expect(paused).toMatchObject({ status: 'paused', nextChunk: 3 });
    expect(done.chunks.length).toBeGreaterThan(10);

    await runner.jobs.resume(b);
    await ended(b);
    const resumed = (await store.getRun(b))!;
    expect(resumed.status).toBe('done');
    expect(resumed.answer).toContain('pier 17');
    expect((await store.listRevisions(b)).map((r) => r.index)).toEqual(range(resumed.chunks.length));
  });

  it('on a server the runs are read at once', async () => {
    // The first steps wait until all three are in flight: runs read one after another would never get there.
    const engine = new CountingEngine(tok, true, 3);
    const { store, runner, doc, ended } = await setup(engine);
    const ids = await runner.startMany(request(doc.id), [...QUESTIONS, 'Who wrote the letters?']);
    await Promise.all(ids.map(ended));
    expect(engine.maxInFlight).toBe(3);
    for (const id of ids) expect((await store.getRun(id))!.status).toBe('done');
  });

  it('refuses an empty question among several and stores nothing', async () => {
    const engine = new CountingEngine(tok);
    const { store, runner, doc } = await setup(engine);
    await expect(runner.startMany(request(doc.id), [QUESTIONS[0]!, '  '])).rejects.toThrow(RequestError);
    await expect(runner.startMany(request(doc.id), [QUESTIONS[0]!, ''])).rejects.toThrow('Question 2 is empty');
    expect(await store.listRuns()).toEqual([]);
  });
});
