import 'fake-indexeddb/auto';
import { beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_TEMPLATES, finalPrompt } from '../src/core/prompts';
import { extractAnswer } from '../src/core/answer';
import { ExtractiveEngine } from '../src/engines/extractive/engine';
import { loadQwenTokenizer, type QwenTokenizer } from '../src/engines/qwen-tokenizer';
import { RUN_ANSWER } from '../src/storage/db';
import { corpusText } from './helpers';
import { testRunner, until } from './runner-setup';

// A two-part fact: where the key is (the first part) and what it opens (the second, which shares one word with the question).
const PARTS_QUESTION = 'Where did Adela Marsh hide the key, and what does that key open?';
const PART_1 = 'Adela Marsh hid the brass key inside the hollow oak beside the mill.';
const PART_2 = 'That key opens the iron chest in the chapel crypt.';
// A two-hop fact: which lighthouse she visited (the first hop), and what its keeper did (the second, found by its name).
const HOP_QUESTION = 'What did the keeper of the lighthouse that Adela Marsh visited do with his letters?';
const HOP_1 = 'Adela Marsh visited the lighthouse on Skerry Point in the spring.';
const HOP_2 = 'The old man who kept Skerry Point burned every letter he was sent.';

let tok: QwenTokenizer;
let book: string;

beforeAll(async () => {
  tok = await loadQwenTokenizer();
  book = corpusText('frankenstein.txt');
});

async function answerFrom(question: string, memory: string): Promise<string> {
  const reply = await new ExtractiveEngine(tok).generate([{ role: 'user', content: finalPrompt(DEFAULT_TEMPLATES, question, memory) }], { maxTokens: 512 });
  return extractAnswer(reply.text);
}

/** `text` with each of `facts` planted as its own paragraph, at the paragraph break nearest each share of the text. */
function plant(text: string, facts: readonly [number, string][]): string {
  let out = text;
  for (const [share, fact] of [...facts].sort((a, b) => b[0] - a[0])) {
    const at = out.indexOf('\n\n', Math.floor(out.length * share));
    out = `${out.slice(0, at)}\n\n${fact}${out.slice(at)}`;
  }
  return out;
}

describe('the model-free answer', () => {
  it('adds the memory sentence holding the part of the question the best one lacks', async () => {
    const memory = ['I opened the door of the mill and found the key on the table.', PART_1, 'The oak was old.', PART_2].join('\n');
    const answer = await answerFrom(PARTS_QUESTION, memory);
    expect(answer).toContain(PART_1);
    expect(answer).toContain(PART_2);
  });

  it('follows a name the chosen sentence shares with another memory sentence: the second hop', async () => {
    const memory = [HOP_1, 'He wrote letters to his sister every week.', 'Her letters were long.', HOP_2].join('\n');
    const answer = await answerFrom(HOP_QUESTION, memory);
    expect(answer).toContain(HOP_1);
    expect(answer).toContain(HOP_2);
    // The best sentence first in the memory's order; the hop before a sentence that only shares "letters".
    expect(answer.indexOf(HOP_1)).toBeLessThan(answer.indexOf(HOP_2));
  });

  it('keeps to a few sentences and answers nothing from a memory that does not hold the question', async () => {
    const memory = Array.from({ length: 12 }, (_, i) => `The key number ${i} opened a door in the mill.`).join('\n');
    const answer = await answerFrom(PARTS_QUESTION, memory);
    expect(answer.match(/\./g)!.length).toBeLessThanOrEqual(4);
    expect(await answerFrom(PARTS_QUESTION, 'The weather was fine.')).toBe('The memory holds nothing that answers the question.');
  });
});

/** A finished run of the worker over the books `books` (one: a book; several: a set), with its stored sources. */
async function read(books: readonly { name: string; text: string }[], question: string) {
  const t = await testRunner(new ExtractiveEngine(tok), tok);
  const ids: string[] = [];
  for (const b of books) ids.push((await t.library.ingest(b.name, new TextEncoder().encode(b.text), 'extractive')).id);
  const runId = await t.runner.start({
    documentId: ids[0]!,
    ...(ids.length > 1 && { documentIds: ids }),
    question,
    engineId: 'extractive',
    chunkTokens: 1000,
    memoryTokens: 256,
    temperature: 0,
    topP: 1,
  });
  await until(async () => (await t.store.getSources(runId, RUN_ANSWER)) !== undefined);
  const run = (await t.store.getRun(runId))!;
  const sources = (await t.store.getSources(runId, RUN_ANSWER))!;
  return { run, memory: run.memory, cited: sources.citations.flatMap((c) => (c.sentence ? [c.sentence.text.replace(/\s+/g, ' ')] : [])) };
}

describe('the model-free engine answers whole, each part cited', () => {
  it('a two-part fact planted far apart in a long book', { timeout: 240_000 }, async () => {
    const text = plant(book.slice(60_000, 200_000), [
      [0.25, PART_1],
      [0.8, PART_2],
    ]);
    const { run, memory, cited } = await read([{ name: 'mill.txt', text }], PARTS_QUESTION);
    expect(run.status).toBe('done');
    expect(memory).toContain(PART_1);
    expect(memory).toContain(PART_2);
    expect(run.answer).toContain(PART_1);
    expect(run.answer).toContain(PART_2);
    expect(cited).toEqual(expect.arrayContaining([PART_1, PART_2]));
  });

  it('a two-hop fact across a set of three books', { timeout: 240_000 }, async () => {
    const filler = book.slice(90_000, 96_000);
    const books = [
      { name: 'travels.txt', text: `${filler}\n\n${HOP_1}\n\n${filler}` },
      { name: 'weather.txt', text: filler.slice(2000) + filler.slice(0, 2000) },
      { name: 'keepers.txt', text: `${filler.slice(3000)}\n\n${HOP_2}\n\n${filler.slice(0, 3000)}` },
    ];
    const { run, memory, cited } = await read(books, HOP_QUESTION);
    expect(run.status).toBe('done');
    expect(memory).toContain(HOP_1);
    expect(memory).toContain(HOP_2);
    expect(run.answer).toContain(HOP_1);
    expect(run.answer).toContain(HOP_2);
    expect(cited).toEqual(expect.arrayContaining([HOP_1, HOP_2]));
  });
});
