import 'fake-indexeddb/auto';
import { describe, expect, it } from 'vitest';
import type { ChatMessage, GenerateOptions } from '../src/core/generation';
import { ExtractiveEngine } from '../src/engines/extractive/engine';
import { loadQwenTokenizer } from '../src/engines/qwen-tokenizer';
import { corpusText } from './helpers';
import { testRunner, until } from './runner-setup';

describe('reading progress for the tab title', () => {
  it('lists each reading run with chunks read and planned, and nothing once it is done', async () => {
    const tok = await loadQwenTokenizer();
    const inner = new ExtractiveEngine(tok);
    let calls = 0;
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    // Holds the fourth step until released: the run is then reading with three chunks read.
    const engine = Object.assign(Object.create(inner) as ExtractiveEngine, {
      generate: async (messages: readonly ChatMessage[], options: GenerateOptions) => {
        if (++calls === 4) await gate;
        return inner.generate(messages, options);
      },
    });
    const { library, store, runner } = await testRunner(engine, tok);
    const doc = await library.ingest('book.txt', new TextEncoder().encode(corpusText('frankenstein.txt').slice(0, 20_000)), 'extractive');
    expect(await store.readingProgress()).toEqual([]);
    const runId = await runner.start({ documentId: doc.id, question: 'Who writes the letters?', engineId: 'extractive', chunkTokens: 600, memoryTokens: 64 });
    await until(async () => (await store.getRun(runId))?.nextChunk === 3);
    const [progress] = await store.readingProgress();
    const run = (await store.getRun(runId))!;
    expect(progress).toEqual({ runId, read: 3, total: run.chunking ? Math.max(run.chunking.estimate, run.chunks.length) : run.chunks.length });
    expect(progress!.total).toBeGreaterThan(3);
    open();
    await until(async () => (await store.getRun(runId))?.status === 'done');
    expect(await store.readingProgress()).toEqual([]);
  });
});
