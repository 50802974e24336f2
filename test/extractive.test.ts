import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { chunkAll } from '../src/core/chunker';
import { memoryLoop } from '../src/core/loop';
import { DEFAULT_TEMPLATES, INITIAL_MEMORY, updatePrompt } from '../src/core/prompts';
import { ExtractiveEngine } from '../src/engines/extractive/engine';
import { loadQwenTokenizer, type QwenTokenizer } from '../src/engines/qwen-tokenizer';
import { corpusText } from './helpers';

const NEEDLE = 'The vault code for the Marlowe archive is 4829137.';
const QUESTION = 'What is the vault code for the Marlowe archive?';

let tok: QwenTokenizer;
let engine: ExtractiveEngine;
let book: string;

beforeAll(async () => {
  tok = await loadQwenTokenizer();
  engine = new ExtractiveEngine(tok);
  book = corpusText('frankenstein.txt');
});

/** `text` with the needle planted after the sentence end nearest to `at`. */
function plant(text: string, at: number): string {
  const cut = text.indexOf('. ', at) + 2;
  return text.slice(0, cut) + NEEDLE + ' ' + text.slice(cut);
}

async function update(memory: string, section: string, maxTokens: number): Promise<string> {
  const prompt = updatePrompt(DEFAULT_TEMPLATES, QUESTION, memory, section);
  return (await engine.generate([{ role: 'user', content: prompt }], { maxTokens })).text;
}

describe('ExtractiveEngine', () => {
  it('keeps the planted sentence from a chunk when asked about it', async () => {
    const section = plant(book.slice(100_000, 108_000), 4000);
    const memory = await update(INITIAL_MEMORY, section, 256);
    expect(memory).toContain(NEEDLE);
    // And keeps it on a later chunk that says nothing about it.
    const later = await update(memory, book.slice(200_000, 208_000), 256);
    expect(later).toContain(NEEDLE);
  });

  it('keeps the memory within the cap, counted with the tokenizer', async () => {
    const section = plant(book.slice(150_000, 160_000), 5000);
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 8, max: 400 }), async (cap) => {
        const memory = await update(INITIAL_MEMORY, section, cap);
        expect(tok.count(memory)).toBeLessThanOrEqual(cap);
        // Again with a full memory carried in: old and new sentences share the cap.
        const next = await update(memory, book.slice(170_000, 180_000), cap);
        expect(tok.count(next)).toBeLessThanOrEqual(cap);
      }),
      { numRuns: 15 },
    );
  });

  it('answers with the code after reading a long document with the needle in the middle', async () => {
    const text = plant(book.slice(50_000, 170_000), 60_000);
    const chunks = chunkAll(text, tok, 2000);
    const needleChunk = chunks.findIndex((c) => text.slice(c.start, c.end).includes(NEEDLE));
    expect(needleChunk).toBeGreaterThan(0);
    expect(needleChunk).toBeLessThan(chunks.length - 1);

    const cap = 256;
    let answer = '';
    for await (const e of memoryLoop({
      text,
      chunks,
      question: QUESTION,
      generator: engine,
      templates: DEFAULT_TEMPLATES,
      memoryTokens: cap,
      sampling: { temperature: 0, topP: 1 },
    })) {
      if (e.kind === 'answer') {
        answer = e.answer;
        continue;
      }
      expect(tok.count(e.memory)).toBeLessThanOrEqual(cap);
      // The code is learnt from its chunk, and never dropped afterwards.
      expect(e.memory.includes('4829137')).toBe(e.index >= needleChunk);
    }
    expect(answer).toContain('4829137');
  });
});
