import { beforeAll, describe, expect, it } from 'vitest';
import { INITIAL_MEMORY } from '../src/core/prompts';
import { plannerQuery, plannerReply, type PlannerView, unitTermCounts } from '../src/engines/extractive/infmem-planner';
import { writeInfmemMemory } from '../src/engines/extractive/memory-step';
import { loadQwenTokenizer, type QwenTokenizer } from '../src/engines/qwen-tokenizer';
import { corpusText } from './helpers';

/** The official function-call pattern (infmem.md §4.2), as a reader of the planner's reply applies it. */
const CALL = /✿FUNCTION✿:\s*([^\n]+)\s*✿ARGS✿:\s*([^✿]+?)(?=✿RESULT✿|✿RETURN✿|✿FUNCTION✿|$)/g;

function parsed(reply: string): { stop: boolean; calls: { name: string; query: unknown }[] } {
  if (reply.includes('STOP')) return { stop: true, calls: [] };
  const calls = [...reply.matchAll(CALL)].map((m) => ({ name: m[1]!.trim(), query: (JSON.parse(m[2]!.trim()) as { query: unknown }).query }));
  return { stop: false, calls };
}

const QUESTION = 'Which brass keys did the lighthouse keeper hide at Skerry Point?';
const FACT = 'The lighthouse keeper hid the brass keys under the third step at Skerry Point.';
/** Units of a book: "keeper" in one, "brass" in two, "skerry" in three, "lighthouse" in four, "point" in five, "hide" in none. */
const UNITS = [
  'The keeper slept. The brass bell rang over Skerry Point and the lighthouse.',
  'A brass lamp stood at the point of the pier near the lighthouse.',
  'Skerry harbour was quiet; the lighthouse stood on the point.',
  'Boats left Skerry at dawn for the point and its lighthouse.',
  'Ida Marsh mended nets. Tobias Venn sold rope.',
  'Tobias Venn walked the point every evening.',
];
const COUNTS = unitTermCounts(UNITS);

function view(memory: string, history: readonly string[] = []): PlannerView {
  return { question: QUESTION, memory, history, unitCounts: COUNTS };
}

describe('InfMem planner stand-in', () => {
  it('searches for the question’s three rarest terms, in a reply the official pattern reads', () => {
    const reply = plannerReply(view(INITIAL_MEMORY));
    // keeper (1 unit), brass (2), skerry (3); point and lighthouse are commoner, "hide" is in no unit.
    expect(reply).toBe('✿FUNCTION✿: retrievesearch\n✿ARGS✿: {"query":"keeper brass skerry"}');
    expect(parsed(reply)).toEqual({ stop: false, calls: [{ name: 'retrievesearch', query: 'keeper brass skerry' }] });
  });

  it('searches for a word as the question writes it, so that the book’s own spelling matches', () => {
    const counts = new Map([['key', 1]]);
    expect(plannerQuery({ question: 'Where are the keys?', memory: '', history: [], unitCounts: counts })).toBe('keys');
  });

  it('votes STOP once a memory sentence holds the question’s key terms', () => {
    const reply = plannerReply(view(`The harbour was quiet.\n${FACT}`));
    expect(reply).toBe('STOP');
    expect(parsed(reply).stop).toBe(true);
  });

  it('votes STOP on two-thirds of the key terms, and searches on fewer', () => {
    // Key terms: brass, key, lighthouse, keeper, hide, skerry, point (7): five are needed.
    expect(plannerReply(view('The keeper kept brass keys at Skerry Point.'))).toBe('STOP');
    expect(plannerReply(view('The keeper kept brass keys on the quay.'))).not.toContain('STOP');
  });

  it('adds the rarest names the memory holds to the query', () => {
    const memory = 'The keeper spoke with Ida Marsh.\nTobias Venn and Ida Marsh sold rope near Skerry.';
    // Ida and Marsh are in one unit each, Tobias and Venn in two; Skerry is the question's own.
    expect(parsed(plannerReply(view(memory))).calls[0]!.query).toBe('keeper brass skerry ida marsh');
  });

  it('does not add a name it searched for before, and asks again only with different words', () => {
    const memory = 'The keeper spoke with Ida Marsh.';
    const first = plannerQuery(view(memory, ['keeper brass skerry ida']))!;
    expect(first).toBe('keeper brass skerry marsh');
    // Both names searched: the question's terms alone, then, asked already, one more of them.
    const second = plannerQuery(view(memory, ['keeper brass skerry ida', first]))!;
    expect(second).toBe('keeper brass skerry');
    expect(plannerQuery(view(memory, ['keeper brass skerry ida', first, second]))).toBe('keeper brass skerry lighthouse');
  });

  it('never asks the same words twice, and votes STOP once every refinement was asked', () => {
    const history: string[] = [];
    for (let step = 0; step < 20; step++) {
      const reply = plannerReply(view('', history));
      const p = parsed(reply);
      if (p.stop) break;
      const query = p.calls[0]!.query as string;
      const words = (q: string) => [...new Set(q.split(' '))].sort().join(' ');
      expect(history.map(words)).not.toContain(words(query));
      history.push(query);
    }
    expect(history).toEqual([
      'keeper brass skerry',
      'keeper brass skerry lighthouse',
      'keeper brass skerry lighthouse point',
      'keeper brass',
      'keeper skerry',
      'brass skerry',
    ]);
    expect(plannerReply(view('', history))).toBe('STOP');
  });
});

describe('InfMem writer by the extractive rule', () => {
  let tok: QwenTokenizer;
  beforeAll(async () => {
    tok = await loadQwenTokenizer();
  });

  it('keeps a planted sentence found in a retrieved passage, read before the chunk', () => {
    const book = corpusText('frankenstein.txt');
    const passage = `${book.slice(20_000, 21_000)} ${FACT} The tide turned at Skerry Point.`;
    const chunk = `${book.slice(90_000, 96_000)} The keeper of the lighthouse was old.`;
    const memory = writeInfmemMemory({ question: QUESTION, memory: INITIAL_MEMORY, passages: [passage], chunk }, { tokenizer: tok, maxTokens: 256 });
    expect(memory).toContain(FACT);
    expect(tok.count(memory)).toBeLessThanOrEqual(256);
    // The passage's sentences come before the chunk's in the memory.
    expect(memory.indexOf(FACT)).toBeLessThan(memory.indexOf('The keeper of the lighthouse was old.'));
    // The next step's planner, shown this memory, stops.
    expect(plannerReply(view(memory))).toBe('STOP');
  });

  it('keeps the memory when neither the passages nor the chunk match', () => {
    const memory = writeInfmemMemory({ question: QUESTION, memory: FACT, passages: ['Rain fell.'], chunk: 'Nobody came.' }, { tokenizer: tok, maxTokens: 256 });
    expect(memory).toBe(FACT);
  });
});
