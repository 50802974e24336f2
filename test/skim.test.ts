import { beforeAll, describe, expect, it } from 'vitest';
import { chunkAll } from '../src/core/chunker';
import { entityTerms, SkimPlanner, skimTerms } from '../src/core/skim';
import { ExtractiveEngine } from '../src/engines/extractive';
import { loadQwenTokenizer, type QwenTokenizer } from '../src/engines/qwen-tokenizer';
import { Haystack } from '../src/eval/haystack';
import { generateSample } from '../src/eval/tasks';
import type { RunEvent } from '../src/storage/db';
import { corpusText } from './helpers';
import { testRunner, until } from './runner-setup';

let tok: QwenTokenizer;
let book: string;
beforeAll(async () => {
  tok = await loadQwenTokenizer();
  book = corpusText('frankenstein.txt');
});

describe('skim terms and entities', () => {
  it('keeps hyphenated keys whole and as parts, and drops stopwords', () => {
    expect(skimTerms('What is the number for quiet-river?')).toEqual(['number', 'quiet-river', 'quiet', 'river']);
  });
  it('takes capitalised words inside a sentence, numbers and keys as entities', () => {
    expect([...entityTerms('Where did Victor meet Henry in 1792 near lake-side?')].sort()).toEqual(['1792', 'henry', 'lake-side', 'victor']);
  });
});

describe('the skim planner', () => {
  it('finds the needle chunk of a generated haystack while reading a small share', () => {
    const essay = Haystack.fromText('frankenstein', book);
    for (const seed of [1, 2, 3, 4]) {
      const sample = generateSample('niah_single_2', { seed, tokens: 64 * 1024, tokenizer: tok, essay });
      const chunks = chunkAll(sample.document, tok, 1000);
      const chosen = new SkimPlanner(sample.document, chunks, sample.question).select();
      const needle = sample.placements[0]!;
      const holder = chunks.findIndex((c) => needle.start < c.end && needle.end > c.start);
      expect(chosen).toContain(holder);
      expect(chosen.length / chunks.length).toBeLessThanOrEqual(0.2);
      expect(chosen).toEqual([...chosen].sort((a, b) => a - b));
    }
  });
});

async function runWith(text: string, question: string, skim: { keep: number; followMemory: boolean } | undefined) {
  const { store, events, runner } = await testRunner(new ExtractiveEngine(tok), tok);
  const doc = await runner.ingest('book.txt', new TextEncoder().encode(text), 'extractive');
  const runId = await runner.start({ documentId: doc.id, question, engineId: 'extractive', requestedChunkTokens: 500, memoryTokens: 256, skim });
  await until(async () => (await store.getRun(runId))?.status === 'done', 1000);
  return { run: (await store.getRun(runId))!, revisions: await store.listRevisions(runId) };
}

describe('a run in skim mode', () => {
  const FIRST = 'Ada Lovelace runs the Marlowe archive.';
  const SECOND = 'The vault code for the Marlowe archive is 4829137.';
  let text: string;
  beforeAll(() => {
    const body = book.slice(30_000, 130_000);
    const at = (f: number) => body.indexOf('\n\n', Math.floor(body.length * f));
    text = `${body.slice(0, at(0.2))}\n\n${FIRST}${body.slice(at(0.2), at(0.8))}\n\n${SECOND}${body.slice(at(0.8))}`;
  });
  const covers = (r: { start: number; end: number }, s: string) => text.slice(r.start, r.end).includes(s);

  it('reads only the chosen chunks, in document order, and records the plan', async () => {
    const { run, revisions } = await runWith(text, 'What is the vault code for the Marlowe archive?', { keep: 0.05, followMemory: false });
    expect(run.skim).toMatchObject({ keep: 0.05, followMemory: false });
    expect(revisions.length).toBe(run.chunks.length);
    expect(revisions.length / run.skim!.totalChunks).toBeLessThanOrEqual(0.2);
    expect(revisions.map((r) => r.start)).toEqual([...revisions.map((r) => r.start)].sort((a, b) => a - b));
    expect(run.answer).toContain('4829137');
  });

  it('follows an entity the memory picked up to a chunk the question alone did not point to', async () => {
    const question = 'What number belongs to the place Ada Lovelace runs?';
    const without = await runWith(text, question, { keep: 0.05, followMemory: false });
    expect(without.revisions.some((r) => covers(r, FIRST))).toBe(true);
    expect(without.revisions.some((r) => covers(r, SECOND))).toBe(false);

    const followed = await runWith(text, question, { keep: 0.05, followMemory: true });
    expect(followed.revisions.some((r) => covers(r, SECOND))).toBe(true);
    // The plan grew ahead of the reader and stayed in order, each chunk read once.
    const starts = followed.revisions.map((r) => r.start);
    expect(starts).toEqual([...new Set(starts)].sort((a, b) => a - b));
    expect(followed.run.chunks.length).toBe(followed.revisions.length);
  });
});
