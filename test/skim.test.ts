import { beforeAll, describe, expect, it } from 'vitest';
import { chunkAll } from '../src/core/chunker';
import { entityTerms, SkimIndex, SkimPlanner, skimTerms } from '../src/core/skim';
import { ExtractiveEngine } from '../src/engines/extractive/engine';
import { loadQwenTokenizer, type QwenTokenizer } from '../src/engines/qwen-tokenizer';
import { Haystack } from '../src/eval/haystack';
import { generateSample } from '../src/eval/tasks';
import { buildExport, ImportError, parseExport } from '../src/storage/export';
import { corpusText } from './helpers';
import { testRunner, until } from './runner-setup';

let tok: QwenTokenizer;
let book: string;
beforeAll(async () => {
  tok = await loadQwenTokenizer();
  book = corpusText('frankenstein.txt');
}, 60_000); // loading the tokenizer takes seconds on a busy machine

describe('skim terms and entities', () => {
  it('keeps hyphenated keys whole and as parts, and drops stopwords', () => {
    expect(skimTerms('What is the number for quiet-river?')).toEqual(['number', 'quiet-river', 'quiet', 'river']);
  });
  it('takes capitalised words inside a sentence, numbers and keys as entities', () => {
    expect([...entityTerms('Where did Victor meet Henry in 1792 near lake-side?')].sort()).toEqual(['1792', 'henry', 'lake-side', 'victor']);
  });
  it("finds a name asked about in the possessive: Ortiz's and Ortiz’s are Ortiz", () => {
    expect(skimTerms("Where is Ortiz's compass, and Ortiz’s map?")).toEqual(['ortiz', 'compass', 'ortiz', 'map']);
    expect([...entityTerms("Where is Captain Ortiz's compass?")].sort()).toEqual(['captain', 'ortiz']);
  });
});

describe('the skim planner', () => {
  it('finds the needle chunk of a generated haystack while reading a small share', () => {
    const essay = Haystack.fromText('frankenstein', book);
    for (const seed of [1, 2, 3, 4]) {
      const sample = generateSample('niah_single_2', { seed, tokens: 64 * 1024, tokenizer: tok, essay });
      const chunks = chunkAll(sample.document, tok, 1000);
      const chosen = new SkimPlanner(new SkimIndex(sample.document, chunks), sample.question).select();
      const needle = sample.placements[0]!;
      const holder = chunks.findIndex((c) => needle.start < c.end && needle.end > c.start);
      expect(chosen).toContain(holder);
      expect(chosen.length / chunks.length).toBeLessThanOrEqual(0.2);
      expect(chosen).toEqual([...chosen].sort((a, b) => a - b));
    }
  });

  it('says why each chunk is planned: ranked, or a neighbour of a ranked one', () => {
    const paragraphs = Array.from({ length: 60 }, (_, i) => (i === 30 ? 'The Marlowe archive is here.' : 'Rain fell on the fields.'));
    let text = '';
    const chunks = paragraphs.map((p) => {
      const span = { start: text.length, end: text.length + p.length, tokens: 6 };
      text += `${p}\n\n`;
      return span;
    });
    const plan = new SkimPlanner(new SkimIndex(text, chunks), 'Where is the Marlowe archive?').plan();
    expect(plan).toEqual([
      { index: 29, reason: { by: 'neighbour' } },
      { index: 30, reason: { by: 'ranked' } },
      { index: 31, reason: { by: 'neighbour' } },
    ]);
    expect(new SkimPlanner(new SkimIndex(text, chunks), 'Who is Quennell?').plan().map((p) => p.reason.by)).toEqual(['start', 'start', 'start']);
  });
});

async function runWith(text: string, question: string, skim: { keep: number; followMemory: boolean; lookBack?: boolean } | undefined) {
  const { library, store, runner } = await testRunner(new ExtractiveEngine(tok), tok);
  const doc = await library.ingest('book.txt', new TextEncoder().encode(text), 'extractive');
  const runId = await runner.start({ documentId: doc.id, question, engineId: 'extractive', chunkTokens: 500, memoryTokens: 256, skim });
  await until(async () => (await store.getRun(runId))?.status === 'done', 1000);
  return { run: (await store.getRun(runId))!, revisions: await store.listRevisions(runId), memories: await store.listMemories(runId) };
}

describe('a run in skim mode', () => {
  const FIRST = 'Ada Lovelace runs the Marlowe archive.';
  const SECOND = 'The vault code for the Marlowe archive is 4829137.';
  /** A fifth of the way into the book, `early`; four fifths in, `late`. */
  const plant = (early: string, late: string) => {
    const body = book.slice(30_000, 130_000);
    const at = (f: number) => body.indexOf('\n\n', Math.floor(body.length * f));
    return `${body.slice(0, at(0.2))}\n\n${early}${body.slice(at(0.2), at(0.8))}\n\n${late}${body.slice(at(0.8))}`;
  };
  let text: string;
  beforeAll(() => {
    text = plant(FIRST, SECOND);
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
    // The stored plan says why each chunk was read.
    const reasons = followed.run.chunks.map((c) => c.reason);
    expect(reasons.every(Boolean)).toBe(true);
    const second = followed.run.chunks.findIndex((c) => covers(c, SECOND));
    expect(followed.run.chunks[second]!.reason).toEqual({ by: 'followed', name: 'Marlowe' });
    expect(followed.run.chunks.find((c) => covers(c, FIRST))!.reason?.by).toBe('ranked');

    // An export keeps the reasons through an import; a reason it does not know is refused.
    const exported = buildExport({ run: followed.run, revisions: followed.revisions, memories: followed.memories });
    expect(parseExport(JSON.stringify(exported)).run.chunks.map((c) => c.reason)).toEqual(reasons);
    const bad = { ...exported, run: { ...exported.run, chunks: exported.run.chunks.map((c) => ({ ...c, reason: { by: 'guessed' } })) } };
    expect(() => parseExport(JSON.stringify(bad))).toThrow(ImportError);
  });

  it('looks back, when asked, at an earlier chunk a name points to, after the last planned one', async () => {
    const reversed = plant(SECOND, FIRST);
    const question = 'What number belongs to the place Ada Lovelace runs?';
    const has = (r: { start: number; end: number }, s: string) => reversed.slice(r.start, r.end).includes(s);

    const forward = await runWith(reversed, question, { keep: 0.05, followMemory: true });
    expect(forward.revisions.some((r) => has(r, SECOND))).toBe(false);

    const back = await runWith(reversed, question, { keep: 0.05, followMemory: true, lookBack: true });
    expect(back.run.skim).toMatchObject({ followMemory: true, lookBack: true });
    const last = back.revisions[back.revisions.length - 1]!;
    expect(has(last, SECOND)).toBe(true);
    expect(last.start).toBeLessThan(back.revisions[back.revisions.length - 2]!.start);
    expect(back.run.chunks[last.index]!.reason).toEqual({ by: 'looked-back', name: 'Marlowe' });
    expect(back.revisions.length).toBe(back.run.chunks.length);
  });

  it('stores no reasons for a full read', async () => {
    const { run } = await runWith(text.slice(0, 20_000), 'What is the vault code for the Marlowe archive?', undefined);
    expect(run.chunks.some((c) => 'reason' in c)).toBe(false);
  });
});
