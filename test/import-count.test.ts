import { beforeAll, describe, expect, it } from 'vitest';
import { chunkAll } from '../src/core/chunker';
import { ExtractiveEngine } from '../src/engines/extractive/engine';
import { loadQwenTokenizer, type QwenTokenizer } from '../src/engines/qwen-tokenizer';
import { estimateTokens } from '../src/library/token-counts';
import { corpusText } from './helpers';
import { testRunner, until } from './runner-setup';
import type { RunEvent } from '../src/agent/protocol';
import { chunkCount } from '../src/core/estimate';

let tok: QwenTokenizer;
let book: string;
beforeAll(async () => {
  tok = await loadQwenTokenizer();
  book = corpusText('frankenstein.txt');
});

const setup = (countAtImportChars: number) => testRunner(new ExtractiveEngine(tok), tok, { countAtImportChars });

const counted = (events: RunEvent[], id: string) => events.some((e) => e.type === 'document' && e.documentId === id);

describe('token counts of long books', () => {
  it('estimates a long text within 3% from samples', () => {
    const text = book.repeat(3);
    const exact = tok.count(text);
    expect(Math.abs(estimateTokens(text, tok) - exact) / exact).toBeLessThan(0.03);
  });

  it('counts a short book exactly while it is imported', async () => {
    const { store, library } = await setup(1_000_000);
    const doc = await library.ingest('book.txt', new TextEncoder().encode(book), 'extractive');
    expect(doc.tokensEstimated).toBeUndefined();
    expect(doc.tokens).toBe(tok.count((await store.getText(doc.id))!));
  });

  it('stores a long book with an estimate at once, then the exact count, and tells the pages', async () => {
    const { store, events, library } = await setup(100_000);
    const text = book.repeat(2);
    const doc = await library.ingest('book.txt', new TextEncoder().encode(text), 'extractive');
    expect(doc.tokensEstimated).toBe(true);
    const imported = events.length; // the import itself told the pages when the book's text was whole
    const stored = (await store.getText(doc.id))!;
    await until(() => counted(events.slice(imported), doc.id));
    const after = (await store.getDocument(doc.id))!;
    expect(after.tokensEstimated).toBeUndefined();
    expect(after.tokens).toBe(tok.count(stored));
    expect(Math.abs(doc.tokens - after.tokens) / after.tokens).toBeLessThan(0.03);
  });

  it('reads a book whose count is not exact yet while cutting it, and ends with the exact chunks', async () => {
    const { store, runner, library } = await setup(100_000);
    const doc = await library.ingest('book.txt', new TextEncoder().encode(book.repeat(2)), 'extractive');
    const runId = await runner.start({ documentId: doc.id, question: 'Who is Elizabeth?', engineId: 'extractive', chunkTokens: 2000, memoryTokens: 128 });
    const started = (await store.getRun(runId))!;
    expect(started.chunks).toEqual([]);
    expect(started.chunking?.estimate).toBe(chunkCount(doc.tokens, 2000));
    await until(async () => (await store.getRun(runId))?.status === 'done');
    const run = (await store.getRun(runId))!;
    expect(run.status).toBe('done');
    expect(run.chunks).toEqual(chunkAll((await store.getText(doc.id))!, tok, 2000));
  });

  it('finishes a count that a closed tab left unfinished', async () => {
    const { store, events, library } = await setup(100_000);
    const text = book.slice(0, 150_000);
    const id = 'unfinished';
    await store.storeDocument(
      { id, name: 'a.txt', bytes: text.length, encoding: 'utf-8', chars: text.length, tokens: 1, tokensEstimated: true, addedAt: 0 },
      text,
    );
    await library.counts.pending();
    expect(await store.getDocument(id)).toMatchObject({ tokens: tok.count(text) });
    expect((await store.getDocument(id))!.tokensEstimated).toBeUndefined();
    expect(counted(events, id)).toBe(true);
  });

  it('leaves a document deleted while it was being counted deleted', async () => {
    const { store, events, library } = await setup(100_000);
    const doc = await library.ingest('book.txt', new TextEncoder().encode(book.repeat(2)), 'extractive');
    await library.deleteDocument(doc.id);
    events.length = 0; // the import's own event, that its text is whole, came before
    await library.counts.count(doc.id, book, tok);
    expect(await store.getDocument(doc.id)).toBeUndefined();
    expect(counted(events, doc.id)).toBe(false);
  });
});
