import 'fake-indexeddb/auto';
import { beforeAll, describe, expect, it } from 'vitest';
import { fold, holdsWords } from '../src/core/fold';
import { findAll } from '../src/core/find-text';
import { chunkAll } from '../src/core/chunker';
import { SkimIndex, SkimPlanner } from '../src/core/skim';
import { DEFAULT_TEMPLATES, finalPrompt } from '../src/core/prompts';
import { ExtractiveEngine } from '../src/engines/extractive/engine';
import { loadQwenTokenizer, type QwenTokenizer } from '../src/engines/qwen-tokenizer';
import { RUN_ANSWER } from '../src/storage/db';
import { prose } from './fixtures/documents';
import { testRunner, until } from './runner-setup';

let tok: QwenTokenizer;
beforeAll(async () => {
  tok = await loadQwenTokenizer();
}, 60_000);

// War and Peace writes its names with the stress marked; readers type them without.
const DEATH = 'The French soldier shot Platón Karatáev by the road, and the dog howled.';
const BATTLE = 'Prince Andrew lay wounded on the field of Borodinó.';

describe('matching folds case, accents and width as a reader expects', () => {
  it('folds accents (precomposed or written apart), full-width letters, ligatures and case; leaves other scripts’ letters alone', () => {
    expect(fold('Borodinó')).toBe('borodino');
    expect(fold('Karata\u0301ev')).toBe('karataev');
    expect(fold('Ｎａｔáｓｈａ')).toBe('natasha');
    expect(fold('ﬁre İstanbul')).toBe('fire istanbul');
    expect(fold('がくせい 学生')).toBe('がくせい 学生');
  });

  it('tells a search box whether a text holds every word typed, in any order, folded', () => {
    const run = 'Who killed Platón Karatáev? · war-and-peace.txt · Dec 7, 2026, 1:55 PM · 2026-12-07';
    expect(holdsWords(run, 'karataev WAR')).toBe(true);
    expect(holdsWords(run, '2026-12-07 platon')).toBe(true);
    expect(holdsWords(run, 'karataev zebra')).toBe(false);
    expect(holdsWords(run, '  ')).toBe(true);
  });

  it('marks the characters a folded match came from in the text shown', () => {
    const text = 'At Borodinó, and again at BORODINO; Karata\u0301ev.';
    expect(findAll(text, 'borodino').map((s) => text.slice(s.start, s.end))).toEqual(['Borodinó', 'BORODINO']);
    expect(findAll(text, 'Karataev').map((s) => text.slice(s.start, s.end))).toEqual(['Karata\u0301ev']);
    expect(findAll('a ﬁne day', 'f').map((s) => [s.start, s.end])).toEqual([[2, 3]]);
  });

  it('lets skim rank the chunks that name Karatáev for a question about Karataev', () => {
    const text = [prose(1, 60), DEATH, prose(2, 60), prose(3, 60)].join('\n\n');
    const chunks = chunkAll(text, tok, 300);
    const holder = chunks.findIndex((c) => c.start <= text.indexOf(DEATH) && text.indexOf(DEATH) < c.end);
    const planner = new SkimPlanner(new SkimIndex(text, chunks), 'Who killed Platon Karataev?', { keep: 0.05, neighbours: 0 });
    expect(planner.plan()).toEqual([{ index: holder, reason: { by: 'ranked' } }]);
  });

  it('lets the extractive engine answer from a memory that writes the name with its accents', async () => {
    const memory = `${BATTLE}\n${DEATH}`;
    const reply = await new ExtractiveEngine(tok).generate([{ role: 'user', content: finalPrompt(DEFAULT_TEMPLATES, 'Who killed Platon Karataev?', memory) }], {
      maxTokens: 256,
    });
    expect(reply.text).toContain(DEATH);
  });

  it('finds the revisions whose memory names Borodinó when the search says Borodino', async () => {
    const t = await testRunner(new ExtractiveEngine(tok), tok);
    const text = [prose(1, 40), BATTLE, prose(2, 40)].join('\n\n');
    const doc = await t.library.ingest('war.txt', new TextEncoder().encode(text), 'extractive');
    const runId = await t.runner.start({
      documentId: doc.id,
      question: 'Where was Prince Andrew wounded?',
      engineId: 'extractive',
      chunkTokens: 300,
      memoryTokens: 128,
    });
    await until(async () => (await t.store.getSources(runId, RUN_ANSWER)) !== undefined);
    const memories = await t.store.listMemories(runId);
    const holding = memories.flatMap((m, i) => (m.includes('Borodinó') ? [i] : []));
    expect(holding.length).toBeGreaterThan(0);
    expect(await t.store.searchMemories(runId, 'Borodino')).toEqual(holding);
    expect(await t.store.searchMemories(runId, 'BORODINÓ')).toEqual(holding);
  });
});
