import { describe, expect, it } from 'vitest';
import { DEFAULT_TEMPLATES } from '../src/core/prompts';
import type { RunRecord } from '../src/storage/schema';
import { bookProgress } from '../src/ui/read-progress';
import { choiceToKeep, formSettingsOf, knownChunks, questionsOf } from '../src/ui/run-form';

const SETTINGS = { chunkTokens: 4800, requestedChunkTokens: 5000, memoryTokens: 512, temperature: 0.3, topP: 0.9, contextTokens: 8192 };

function run(over: Partial<RunRecord> = {}): RunRecord {
  return {
    id: 'a',
    documentId: 'book',
    documentName: 'book.txt',
    question: 'Who?',
    engineId: 'extractive',
    settings: SETTINGS,
    templates: { ...DEFAULT_TEMPLATES },
    prompts: { set: 'app', label: "This app's wording", answerStyle: 'lenient' },
    chunks: [],
    status: 'done',
    nextChunk: 0,
    memory: '',
    createdAt: 1000,
    updatedAt: 1000,
    ...over,
  };
}

describe('the questions read together with a run', () => {
  // One Read of three questions: planned together, created a millisecond apart, the first question latest (runs/plan.ts).
  const read = [
    run({ id: 'q1', question: 'First?', createdAt: 1002 }),
    run({ id: 'q2', question: 'Second?', createdAt: 1001 }),
    run({ id: 'q3', question: 'Third?', createdAt: 1000 }),
  ];

  it('are every question of its Read, in the order asked, whichever of them is open', () => {
    for (const open of read) expect(questionsOf(open, read)).toEqual(['First?', 'Second?', 'Third?']);
  });

  it('leave out runs of another Read: another time, book, engine or plan', () => {
    const others = [
      run({ id: 'later', question: 'Later?', createdAt: 1004 }),
      run({ id: 'book', question: 'Other book?', createdAt: 999, documentId: 'other' }),
      run({ id: 'engine', question: 'Other engine?', createdAt: 999, engineId: 'openai' }),
      run({ id: 'memory', question: 'Other memory?', createdAt: 1003, settings: { ...SETTINGS, memoryTokens: 1024 } }),
    ];
    expect(questionsOf(read[1]!, [...others, ...read])).toEqual(['First?', 'Second?', 'Third?']);
    expect(questionsOf(others[0]!, [...others, ...read])).toEqual(['Later?']);
  });

  it('are every question of its Read though each samples with its own seed', () => {
    const seeded = read.map((r, i) => ({ ...r, settings: { ...SETTINGS, seed: [7, 1_234_567, 89][i] } }));
    for (const open of seeded) expect(questionsOf(open, seeded)).toEqual(['First?', 'Second?', 'Third?']);
  });

  it("are the run's own question alone when no other run is known", () => {
    expect(questionsOf(read[1]!, [])).toEqual(['Second?']);
  });
});

describe("the form's settings of a run", () => {
  it("are the sizes as asked, not as the budget cut them, and the run's sampling", () => {
    expect(formSettingsOf(run(), null)).toMatchObject({ chunkTokens: 5000, memoryTokens: 512, temperature: 0.3, topP: 0.9, seed: null, skim: false });
    expect(formSettingsOf(run({ settings: { ...SETTINGS, seed: 42 } }), null).seed).toBe(42);
  });

  it("are an InfMem read's method, early stop and thinking, and MemAgent's for a run without a method", () => {
    expect(formSettingsOf(run(), null)).toMatchObject({ method: 'memagent' });
    const method = { kind: 'infmem', earlyStop: 2, thinking: false } as const;
    expect(formSettingsOf(run({ method }), null)).toMatchObject({ method: 'infmem', earlyStop: 2, thinking: false });
  });

  it('are a skim as the form took it, in percent', () => {
    const skim = { keep: 0.07, neighbours: 1, followMemory: true, lookBack: true, totalChunks: 90 };
    expect(formSettingsOf(run({ skim }), null)).toMatchObject({ skim: true, skimPercent: 7, skimFollow: true, skimLookBack: true });
  });

  it('leave a prompt choice to the engine where the run used its default, and name one that differs', () => {
    expect(formSettingsOf(run(), null)).not.toHaveProperty('promptSet');
    expect(formSettingsOf(run(), 'memagent').promptSet).toBe('app');
    const model = run({ engineId: 'openai', prompts: { set: 'memagent', label: 'MemAgent (paper)', answerStyle: 'recurrent' } });
    expect(formSettingsOf(model, null)).not.toHaveProperty('promptSet');
    expect(formSettingsOf({ ...model, prompts: { ...model.prompts!, set: 'memagent-boxed' } }, null).promptSet).toBe('memagent-boxed');
  });

  it("carry edited templates, and leave the form's choice where the run's set stood in for another", () => {
    const templates = { update: 'U {problem} {memory} {section}', final: 'F {problem} {memory}' };
    expect(formSettingsOf(run({ templates, prompts: { set: 'custom', label: 'Edited', answerStyle: 'lenient' } }), null)).toMatchObject({
      promptSet: 'custom',
      templates,
    });
    const stoodIn = run({ engineId: 'openai', prompts: { set: 'app', label: "This app's wording", answerStyle: 'lenient', note: 'not in this browser yet' } });
    expect(formSettingsOf(stoodIn, 'memagent')).not.toHaveProperty('promptSet');
  });
});

describe('the books the form keeps for the next visit', () => {
  it('keeps books the person chose over another run than the one shown, so a reload does not swap them for its book', () => {
    expect(choiceToKeep(['pride'], 'chosen', run({ documentId: 'frankenstein' }))).toEqual(['pride']);
    expect(choiceToKeep(['pride'], 'chosen', null)).toEqual(['pride']);
  });

  it('keeps nothing once the run shown reads those books, for books the form took from a run, or for none', () => {
    expect(choiceToKeep(['book'], 'chosen', run())).toBeNull();
    const set = run({ books: [{ documentId: 'a' } as never, { documentId: 'b' } as never] });
    expect(choiceToKeep(['a', 'b'], 'chosen', set)).toBeNull();
    expect(choiceToKeep(['b', 'a'], 'chosen', set)).toEqual(['b', 'a']);
    expect(choiceToKeep(['pride'], 'run', run())).toBeNull();
    expect(choiceToKeep([], 'chosen', run())).toBeNull();
  });
});

describe("the chunk count the Read form's estimate can know", () => {
  const cut = (n: number) => Array.from({ length: n }, (_, i) => ({ start: i, end: i + 1, tokens: 1 }));
  const asked = { bookIds: ['book'], engineId: 'extractive', model: '', chunkTokens: 5000 };
  const whole = { ...SETTINGS, chunkTokens: 5000, requestedChunkTokens: 5000 };

  it('is the count a finished cut of the same book, engine, model and chunk size took: 158, where the size alone estimates 157', () => {
    expect(knownChunks([run({ settings: whole, chunks: cut(158) })], asked)).toBe(158);
    // A skim keeps the whole book's count beside the chunks it read.
    const skim = { keep: 0.1, neighbours: 1, followMemory: false, totalChunks: 158 };
    expect(knownChunks([run({ settings: whole, chunks: cut(20), skim })], asked)).toBe(158);
  });

  it('is unknown for another book, engine, model or size, a cut the budget made smaller, and a book still being cut', () => {
    const past = run({ settings: whole, chunks: cut(158) });
    expect(knownChunks([past], { ...asked, bookIds: ['other'] })).toBeNull();
    expect(knownChunks([past], { ...asked, engineId: 'openai' })).toBeNull();
    expect(knownChunks([past], { ...asked, model: 'qwen' })).toBeNull();
    expect(knownChunks([past], { ...asked, chunkTokens: 3000 })).toBeNull();
    expect(knownChunks([run({ settings: { ...whole, chunkTokens: 4800 }, chunks: cut(165) })], asked)).toBeNull();
    expect(knownChunks([run({ settings: whole, chunks: cut(40), chunking: { estimate: 157 } })], asked)).toBeNull();
  });
});

describe('the book read for all questions of one read', () => {
  const chunks = Array.from({ length: 100 }, (_, i) => ({ start: i, end: i + 1, tokens: 1 }));
  const q = (id: string, status: RunRecord['status'], nextChunk: number) => run({ id, status, nextChunk, chunks });

  it('counts only the questions still being read: one paused or failed far behind does not hold it back', () => {
    expect(bookProgress([q('a', 'running', 60), q('b', 'paused', 10), q('c', 'running', 58)])).toEqual({ read: 58, total: 100, writing: 2 });
    expect(bookProgress([q('a', 'running', 60), q('b', 'failed', 3)])).toEqual({ read: 60, total: 100, writing: 1 });
  });

  it('with none reading, is how far the furthest got', () => {
    expect(bookProgress([q('a', 'done', 100), q('b', 'paused', 10)])).toEqual({ read: 100, total: 100, writing: 0 });
  });
});
