import { beforeAll, describe, expect, it } from 'vitest';
import { abortError, type ChatMessage, type GenerateOptions, type GenerateResult } from '../src/core/generation';
import { DEFAULT_TEMPLATES } from '../src/core/prompts';
import type { Engine } from '../src/engines/engine';
import { ExtractiveEngine } from '../src/engines/extractive/engine';
import { loadQwenTokenizer, type QwenTokenizer } from '../src/engines/qwen-tokenizer';
import { RequestError } from '../src/jobs/request-error';
import { corpusText } from './helpers';
import { testRunner, until } from './runner-setup';
import type { RunEvent } from '../src/agent/protocol';

let tok: QwenTokenizer;
let bytes: Uint8Array<ArrayBuffer>;

beforeAll(async () => {
  tok = await loadQwenTokenizer();
  bytes = new TextEncoder().encode(corpusText('frankenstein.txt').slice(60_000, 66_000) + ' The vault code for the Marlowe archive is 4829137.');
});

/** Streams the extractive engine's reply a word at a time, as a model streams tokens. */
class StreamingEngine implements Engine {
  readonly id = 'extractive';
  readonly contextWindow = 131_072;
  readonly inner: ExtractiveEngine;
  constructor(readonly tokenizer: QwenTokenizer) {
    this.inner = new ExtractiveEngine(tokenizer);
  }
  async generate(messages: readonly ChatMessage[], options: GenerateOptions): Promise<GenerateResult> {
    const result = await this.inner.generate(messages, { ...options, onToken: undefined });
    for (const word of result.text.split(/(?<=\s)/)) {
      if (options.signal?.aborted) throw abortError();
      options.onToken?.(word);
      await new Promise((r) => setTimeout(r, 15));
    }
    return result;
  }
}

async function setup() {
  const { library, store, events, runner } = await testRunner(new StreamingEngine(tok), tok);
  const doc = await library.ingest('book.txt', bytes, 'extractive');
  return { store, events, runner, doc };
}

describe('the memory being written streams to every tab', () => {
  it('publishes growing prefixes of each memory before the revision is committed', async () => {
    const { store, events, runner, doc } = await setup();
    const runId = await runner.start({
      documentId: doc.id,
      question: 'What is the vault code for the Marlowe archive?',
      engineId: 'extractive',
      chunkTokens: 500,
      memoryTokens: 256,
    });
    await until(async () => (await store.getRun(runId))?.status === 'done');
    const memories = await store.listMemories(runId);
    const writing = events.filter((e): e is Extract<RunEvent, { type: 'writing' }> => e.type === 'writing');
    expect(writing.length).toBeGreaterThan(0);
    for (const w of writing) {
      // Index = chunk count means the final answer is being written.
      const final = w.index < memories.length ? memories[w.index]! : (await store.getRun(runId))!.reply!;
      expect(final.startsWith(w.text.trim()) || final.trim().startsWith(w.text.trim())).toBe(true);
      // Each writing event comes before its revision's commit event.
      const committed = events.findIndex((e) => e.type === 'revision' && e.index === w.index);
      if (w.index < memories.length) expect(events.indexOf(w)).toBeLessThan(committed);
    }
  });

  it('announces nothing of a step that a pause stopped', async () => {
    const { store, events, runner, doc } = await setup();
    const runId = await runner.start({
      documentId: doc.id,
      question: 'What is the vault code for the Marlowe archive?',
      engineId: 'extractive',
      chunkTokens: 500,
      memoryTokens: 256,
    });
    await until(() => events.some((e) => e.type === 'writing'));
    await runner.jobs.pause(runId);
    const pausedAt = events.length;
    // Once the reader has stopped, a text it still had queued would go out within the stream's 100 ms: a timer
    // set after that one fires after it, however busy the machine.
    await runner.jobs.settled(runId);
    await new Promise((r) => setTimeout(r, 150));
    expect(events.slice(pausedAt).filter((e) => e.type === 'writing' || e.type === 'revision')).toEqual([]);
    expect((await store.getRun(runId))!.status).toBe('paused');
  });
});

describe('settings and templates of a run', () => {
  it('records the exact sampling settings and templates it used', async () => {
    const { store, runner, doc } = await setup();
    const templates = { update: DEFAULT_TEMPLATES.update.replace('You are reading', 'You read'), final: DEFAULT_TEMPLATES.final };
    const runId = await runner.start({
      documentId: doc.id,
      question: 'What is the vault code?',
      engineId: 'extractive',
      chunkTokens: 800,
      memoryTokens: 128,
      temperature: 0.3,
      topP: 0.8,
      seed: 7,
      templates,
    });
    const run = (await store.getRun(runId))!;
    expect(run.settings).toMatchObject({ temperature: 0.3, topP: 0.8, seed: 7, memoryTokens: 128, requestedChunkTokens: 800 });
    expect(run.templates).toEqual(templates);
    // Read to its end, so that no write of this run falls after the store is closed.
    await until(async () => (await store.getRun(runId))?.status === 'done');
  });

  it('refuses a template that lost a slot, storing nothing', async () => {
    const { store, runner, doc } = await setup();
    const broken = { update: DEFAULT_TEMPLATES.update.replace('{section}', ''), final: DEFAULT_TEMPLATES.final };
    await expect(
      runner.start({ documentId: doc.id, question: 'Q?', engineId: 'extractive', chunkTokens: 800, memoryTokens: 128, templates: broken }),
    ).rejects.toThrow(RequestError);
    expect(await store.listRuns()).toEqual([]);
  });
});
