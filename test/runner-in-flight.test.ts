/**
 * The questions of one read on a server, with its bound on requests in flight:
 * the runs' requests wait their turn beyond the bound, and each question still
 * reads to its own answer.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { ChatMessage, GenerateOptions, GenerateResult } from '../src/core/generation';
import type { Engine } from '../src/engines/engine';
import { ExtractiveEngine } from '../src/engines/extractive/engine';
import { loadQwenTokenizer, type QwenTokenizer } from '../src/engines/qwen-tokenizer';
import { StepHold } from '../src/jobs/step-hold';
import { corpusText } from './helpers';
import { testRunner, until } from './runner-setup';

const FACTS = [
  { sentence: 'The ferry to Carrow Island leaves from pier 17.', question: 'From which pier does the ferry to Carrow Island leave?', answer: 'pier 17' },
  { sentence: 'The vault code for the Marlowe archive is 4829137.', question: 'What is the vault code for the Marlowe archive?', answer: '4829137' },
  { sentence: 'The bridge at Saltmarsh was built by Ada Penhallow.', question: 'Who built the bridge at Saltmarsh?', answer: 'Ada Penhallow' },
  { sentence: 'The lighthouse on Gull Rock is painted a deep red colour.', question: 'What colour is the lighthouse on Gull Rock?', answer: 'deep red' },
];

let tok: QwenTokenizer;
let book: Uint8Array<ArrayBuffer>;

beforeAll(async () => {
  tok = await loadQwenTokenizer();
  let text = corpusText('frankenstein.txt').slice(80_000, 104_000);
  // Each fact at the end of a sentence a fifth further into the excerpt, from the back so the earlier places stay put.
  for (let i = FACTS.length - 1; i >= 0; i--) {
    const at = text.indexOf('. ', ((i + 1) * text.length) / (FACTS.length + 1)) + 2;
    text = `${text.slice(0, at)}${FACTS[i]!.sentence} ${text.slice(at)}`;
  }
  book = new TextEncoder().encode(text);
});

/** A server stand-in: the extractive engine behind a gate that holds every request until opened, counting those in flight. */
class HeldServer implements Engine {
  readonly id = 'extractive';
  readonly parallel = true;
  readonly inner: ExtractiveEngine;
  readonly contextWindow: number;
  inFlight = 0;
  most = 0;
  private held: (() => void)[] | null = [];

  constructor(
    readonly tokenizer: QwenTokenizer,
    readonly requestsAtOnce: number,
  ) {
    this.inner = new ExtractiveEngine(tokenizer);
    this.contextWindow = this.inner.contextWindow;
  }

  /** Lets the held requests go, and every later one straight through. */
  open(): void {
    for (const go of this.held?.splice(0) ?? []) go();
    this.held = null;
  }

  async generate(messages: readonly ChatMessage[], options: GenerateOptions): Promise<GenerateResult> {
    this.most = Math.max(this.most, ++this.inFlight);
    try {
      if (this.held) await new Promise<void>((resolve) => this.held!.push(resolve));
      return await this.inner.generate(messages, options);
    } finally {
      this.inFlight--;
    }
  }
}

describe('questions of one read on a server with a bound on requests in flight', () => {
  it('with the bound at 2, four questions never have more than 2 requests at the server, and each reads to its own answer', async () => {
    const engine = new HeldServer(tok, 2);
    // Every run's first step waits here until all four have reached it: then all four ask the server at once.
    const reached = new Set<string>();
    const hold = new StepHold((m) => m.type === 'held' && reached.add(m.runId));
    hold.hear({ type: 'hold', index: 0 });
    const { store, runner, library, events } = await testRunner(engine, tok, { hold });
    const doc = await library.ingest('book.txt', book, 'extractive');
    const ids = await runner.startMany(
      { documentId: doc.id, engineId: 'extractive', chunkTokens: 300, memoryTokens: 128 },
      FACTS.map((f) => f.question),
    );
    await until(() => reached.size === ids.length);
    hold.hear({ type: 'release' });
    await until(() => engine.inFlight >= 2);
    // Whatever the four runs send goes out in the microtasks after their release; a macrotask later, none more came.
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(engine.inFlight).toBe(2);

    engine.open();
    await until(() => ids.every((id) => events.some((e) => e.type === 'status' && e.runId === id && (e.status === 'done' || e.status === 'failed'))));
    expect(engine.most).toBe(2);
    for (const [i, id] of ids.entries()) {
      const run = (await store.getRun(id))!;
      expect(run).toMatchObject({ status: 'done', question: FACTS[i]!.question });
      expect(run.answer).toContain(FACTS[i]!.answer);
      expect((await store.listRevisions(id)).length).toBe(run.chunks.length);
    }
  });
});
