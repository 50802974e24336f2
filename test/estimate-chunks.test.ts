import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { chunkAll } from '../src/core/chunker';
import { chunkCount, readSize } from '../src/core/estimate';
import { DEFAULT_READ_SETTINGS } from '../src/core/plan';
import { ExtractiveEngine } from '../src/engines/extractive/engine';
import { loadQwenTokenizer, type QwenTokenizer } from '../src/engines/qwen-tokenizer';
import { corpusBytes } from './helpers';
import { testRunner, until } from './runner-setup';

// Real books as a person adds them: the haystack the repository ships, and the corpus's PDF.
const BOOKS: [string, () => Uint8Array<ArrayBuffer>][] = [
  ['frankenstein.txt', () => new Uint8Array(readFileSync(new URL('../data/haystack/frankenstein.txt', import.meta.url)))],
  ['pride-and-prejudice.pdf', () => corpusBytes('pride-and-prejudice.pdf')],
];

let tok: QwenTokenizer;
beforeAll(async () => {
  tok = await loadQwenTokenizer();
});

/** A runner over a fresh store with both books imported, their token counts exact (as the form shows them once counted). */
async function withBooks() {
  const setup = await testRunner(new ExtractiveEngine(tok), tok);
  const docs = [];
  for (const [name, bytes] of BOOKS) {
    const doc = await setup.library.ingest(name, bytes(), 'extractive');
    await until(async () => !(await setup.store.getDocument(doc.id))?.tokensEstimated);
    docs.push((await setup.store.getDocument(doc.id))!);
  }
  return { ...setup, docs };
}

/** What the Read form's estimate counts for these books at these settings. */
const estimated = (tokens: number | number[], chunkTokens: number) => readSize(tokens, chunkTokens, DEFAULT_READ_SETTINGS.memoryTokens).chunks;

describe("the estimate's chunk count against the read's", () => {
  it('counts, at the default settings, the chunks a read of each real book and of both as a set takes', { timeout: 240_000 }, async () => {
    const { runner, store, docs } = await withBooks();
    const { chunkTokens, memoryTokens } = DEFAULT_READ_SETTINGS;
    const read = async (ids: string[]) => {
      const runId = await runner.start({
        documentId: ids[0]!,
        ...(ids.length > 1 ? { documentIds: ids } : {}),
        question: 'Who is Elizabeth?',
        engineId: 'extractive',
        chunkTokens,
        memoryTokens,
      });
      await until(async () => (await store.getRun(runId))?.status === 'done', 20_000);
      const run = (await store.getRun(runId))!;
      expect(run.status).toBe('done');
      return run;
    };
    for (const doc of docs) {
      const run = await read([doc.id]);
      expect({ book: doc.name, estimate: estimated(doc.tokens, chunkTokens) }).toEqual({ book: doc.name, estimate: run.chunks.length });
    }
    const set = await read(docs.map((d) => d.id));
    expect(
      estimated(
        docs.map((d) => d.tokens),
        chunkTokens,
      ),
    ).toBe(set.chunks.length);
  });

  it('is within a chunk, or 2%, of the chunks the planner cuts each real book into at chunk sizes from 300 to 30,000', { timeout: 240_000 }, async () => {
    const { store, docs } = await withBooks();
    for (const doc of docs) {
      const text = (await store.getText(doc.id))!;
      for (const size of [300, 500, 1000, 2000, 3000, 5000, 8000, 12_000, 20_000, 30_000]) {
        const cut = chunkAll(text, tok, size).length;
        const off = Math.abs(estimated(doc.tokens, size) - cut);
        expect({ book: doc.name, size, off: off <= Math.max(1, cut * 0.02) }).toEqual({ book: doc.name, size, off: true });
      }
    }
  });

  it('counts one chunk for a book that fits in one, none for an empty one, and never fewer than the size alone allows', () => {
    expect(chunkCount(0, 5000)).toBe(0);
    expect(chunkCount(4999, 5000)).toBe(1);
    expect(chunkCount(5000, 5000)).toBe(1);
    for (const tokens of [5001, 10_000, 99_736, 158_340, 1_000_000]) {
      for (const size of [100, 500, 5000, 100_000]) expect(chunkCount(tokens, size)).toBeGreaterThanOrEqual(Math.ceil(tokens / size));
    }
  });
});
