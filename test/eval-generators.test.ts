import { beforeAll, describe, expect, it } from 'vitest';
import { chunkAll } from '../src/core/chunker';
import { loadQwenTokenizer, type QwenTokenizer } from '../src/engines/qwen-tokenizer';
import { generatedEssay } from '../src/eval/essay';
import { Haystack } from '../src/eval/haystack';
import { generateSample, TASK_IDS, type TaskId, type TaskSample } from '../src/eval/tasks';
import { corpusText } from './helpers';

let tok: QwenTokenizer;
let book: Haystack;

beforeAll(async () => {
  tok = await loadQwenTokenizer();
  book = Haystack.fromText('frankenstein.txt', corpusText('frankenstein.txt'));
});

const K = 1024;
const make = (task: TaskId, tokens: number, seed = 1, essay: Haystack = book): TaskSample => generateSample(task, { seed, tokens, tokenizer: tok, essay });

function occurrences(text: string, word: string): number {
  return text.split(' ').filter((w) => w === word).length;
}

describe('document length', () => {
  for (const task of TASK_IDS) {
    it(`${task} hits 8K and 32K within 2% by the tokenizer, and knows its own count`, () => {
      for (const target of [8 * K, 32 * K]) {
        const s = make(task, target, 11);
        const real = tok.count(s.document);
        expect(Math.abs(real - target) / target).toBeLessThanOrEqual(0.02);
        // Counted from segments, never re-encoded: the sum is exact.
        expect(s.tokens).toBe(real);
      }
    });
  }

  it('reaches 1M tokens by repeating the haystack, within 2%', () => {
    for (const task of ['niah_single_2', 'cwe'] as const) {
      const s = make(task, 1024 * K, 5);
      const real = tok.count(s.document);
      expect(Math.abs(real - 1024 * K) / (1024 * K)).toBeLessThanOrEqual(0.02);
      expect(s.tokens).toBe(real);
    }
  });

  it('fills from any haystack: the generated essay, or a short document repeated', () => {
    const essay = make('niah_single_3', 32 * K, 2, generatedEssay());
    expect(Math.abs(tok.count(essay.document) - 32 * K)).toBeLessThanOrEqual(0.02 * 32 * K);
    const tiny = Haystack.fromText('note.txt', 'A short note.\n\nIt has three sentences. That is all.');
    const repeated = make('book_qa', 8 * K, 2, tiny);
    expect(Math.abs(tok.count(repeated.document) - 8 * K)).toBeLessThanOrEqual(0.02 * 8 * K);
    expect(repeated.document.split('It has three sentences.').length).toBeGreaterThan(100);
  });
});

describe('determinism and seeds', () => {
  it('the same seed gives the same sample', () => {
    for (const task of TASK_IDS) expect(make(task, 8 * K, 3)).toEqual(make(task, 8 * K, 3));
  });

  it('needle positions vary with the seed and spread through the document', () => {
    const depths = [1, 2, 3, 4, 5, 6, 7, 8].map((seed) => {
      const s = make('niah_single_2', 32 * K, seed);
      return s.placements[0]!.tokenOffset / s.tokens;
    });
    expect(new Set(depths.map((d) => d.toFixed(3))).size).toBe(depths.length);
    expect(Math.min(...depths)).toBeLessThan(0.35);
    expect(Math.max(...depths)).toBeGreaterThan(0.65);
    const values = [1, 2, 3].map((seed) => make('niah_single_1', 8 * K, seed).references[0]);
    expect(new Set(values).size).toBe(3);
  });
});

describe('planted references', () => {
  const niah = TASK_IDS.filter((t) => t.startsWith('niah_'));

  it.each(niah)('%s: every needle is where it says, at its depth, and holds the references', (task) => {
    const s = make(task, 32 * K, 21);
    expect(s.placements.length).toBeGreaterThan(0);
    for (const p of s.placements) {
      expect(s.document.slice(p.start, p.end)).toBe(p.text);
      expect(p.text).toMatch(/^One of the special magic (numbers|uuids) for \S+ is: \S+\.$/);
      // Tokens before the needle, counted for real (the space before it belongs to its segment).
      expect(tok.count(s.document.slice(0, Math.max(0, p.start - 1)))).toBe(p.tokenOffset);
      expect(Math.abs(p.tokenOffset / s.tokens - p.depth)).toBeLessThan(0.02);
    }
    for (const ref of s.references) {
      const holder = s.placements.filter((p) => p.text.endsWith(`is: ${ref}.`));
      expect(holder).toHaveLength(1);
      // The key the question asks for is the one beside the reference.
      const key = /for (\S+) is:/.exec(holder[0]!.text)![1]!;
      expect(s.question).toContain(key);
      expect(s.document.split(ref).length - 1).toBe(1);
    }
  });

  it('niah tasks plant as many needles and ask for as many values as RULER does', () => {
    const counts = (t: TaskId) => {
      const s = make(t, 8 * K, 4);
      return [s.placements.length, s.references.length];
    };
    expect(counts('niah_single_1')).toEqual([1, 1]);
    expect(counts('niah_multikey_1')).toEqual([4, 1]);
    expect(counts('niah_multivalue')).toEqual([4, 4]);
    expect(counts('niah_multiquery')).toEqual([4, 4]);
    // The needle haystack is made of needles with other keys.
    const mk2 = make('niah_multikey_2', 8 * K, 4);
    expect(mk2.document.split('special magic numbers').length - 1).toBeGreaterThan(200);
    expect(make('niah_multikey_3', 8 * K, 4).references[0]).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });

  it('vt: the chain of five assignments sits in order, each once', () => {
    const s = make('vt', 32 * K, 8);
    expect(s.placements).toHaveLength(5);
    const value = /value (\d+)/.exec(s.question)![1]!;
    expect(s.placements[0]!.text).toBe(`VAR ${s.references[0]} = ${value}.`);
    for (let i = 1; i < 5; i++) expect(s.placements[i]!.text).toBe(`VAR ${s.references[i]} = VAR ${s.references[i - 1]}.`);
    for (const p of s.placements) expect(s.document.slice(p.start, p.end)).toBe(p.text);
  });

  it('fwe: the three references are the most frequent words after the noise mark', () => {
    const s = make('fwe', 32 * K, 9);
    const counts = new Map<string, number>();
    for (const w of s.document.split(' ')) counts.set(w, (counts.get(w) ?? 0) + 1);
    const ranked = [...counts].filter(([w]) => w !== '...').sort((a, b) => b[1] - a[1]);
    expect(ranked.slice(0, 3).map(([w]) => w)).toEqual(s.references);
    expect(ranked[2]![1]).toBeGreaterThan(ranked[3]![1]);
  });

  it('cwe: the ten references appear 30 times each, every other word 3 times', () => {
    const s = make('cwe', 32 * K, 10);
    const words = s.document.split(/ ?\d+\. /).filter(Boolean);
    expect(s.references).toHaveLength(10);
    for (const ref of s.references) expect(occurrences(s.document, ref)).toBe(30);
    const others = new Set(words.filter((w) => !s.references.includes(w)));
    expect(others.size).toBeGreaterThan(500);
    for (const w of [...others].slice(0, 50)) expect(occurrences(s.document, w)).toBe(3);
  });

  it('book_qa: two facts, in far-apart chunks, that the question needs both of', () => {
    for (const seed of [1, 2, 3, 4, 5, 6]) {
      const s = make('book_qa', 32 * K, seed);
      expect(s.placements).toHaveLength(2);
      const [a, b] = s.placements;
      for (const p of s.placements) expect(s.document.slice(p.start, p.end)).toBe(p.text);
      expect(a!.tokenOffset / s.tokens).toBeLessThan(0.37);
      expect(b!.tokenOffset / s.tokens).toBeGreaterThan(0.63);
      const chunks = chunkAll(s.document, tok, 5000);
      const chunkOf = (at: number) => chunks.findIndex((c) => c.start <= at && at < c.end);
      expect(chunkOf(b!.start) - chunkOf(a!.start)).toBeGreaterThanOrEqual(2);
      // The answer is in one fact only; the other links it to the question.
      const answer = s.references[0]!;
      const [withAnswer, bridge] = a!.text.includes(answer) ? [a!, b!] : [b!, a!];
      expect(withAnswer.text).toContain(answer);
      expect(bridge.text).not.toContain(answer);
      expect(s.question).not.toContain(answer);
      const link = withAnswer.text.split(' ').find((w) => /^[A-Z][a-z]{3,}[.,]?$/.test(w) && bridge.text.includes(w.replace(/[.,]$/, '')));
      expect(link).toBeDefined();
    }
  });
});
