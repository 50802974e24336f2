import { describe, expect, it } from 'vitest';
import { citedPassage, neverReadChunk, passageTarget, planEntry, planWords, retrievedFrom } from '../src/ui/inspector/infmem-plan';
import type { RevisionRecord } from '../src/storage/schema';

const passage = (start: number, chunk = 0) => ({ chunk, start, end: start + 100, excerpt: 'words' });
const revision = (plan: RevisionRecord['plan']): RevisionRecord => ({
  runId: 'r',
  index: 0,
  memoryTokens: 10,
  wordsAdded: 0,
  wordsRemoved: 0,
  start: 0,
  end: 1000,
  chunkTokens: 5000,
  promptTokens: 0,
  completionTokens: 0,
  ms: 1,
  finishReason: 'stop',
  retries: 0,
  committedAt: 0,
  ...(plan && { plan }),
});
const searched = { stop: false, queries: ['ortiz compass'], votes: 0, retrieved: [passage(500), passage(9000, 9), passage(12_000, 12)] };

describe('an InfMem step in the inspector', () => {
  it('says its plan: the searches, a vote to stop with the votes in a row, or a reply with no search', () => {
    expect(planWords(searched, 3)).toBe('Searched for “ortiz compass”');
    expect(planWords({ stop: true, queries: [], votes: 2, retrieved: [] }, 3)).toBe('Voted to stop (2 of 3 in a row)');
    expect(planWords({ stop: false, queries: [], votes: 1, retrieved: [] }, 3)).toBe('Called no search (1 of 3 votes to stop in a row)');
    expect(planEntry(revision(searched), 3)).toBe(' · searched “ortiz compass”');
    expect(planEntry(revision({ stop: true, queries: [], votes: 1, retrieved: [] }), 3)).toBe(' · voted to stop (1 of 3)');
    expect(planEntry(revision(undefined), 3)).toBe('');
  });

  it("marks the passage that holds a source's sentence only where the step's own chunk does not", () => {
    const cited = (start: number, end: number) => ({ revision: 0, start, end, focus: 1 });
    expect(citedPassage(revision(searched), cited(9010, 9050))).toBe(1);
    expect(citedPassage(revision(searched), cited(12_000, 12_100))).toBe(2);
    // In the chunk the step read: the section pane marks it, not the passage (which lies in that chunk too).
    expect(citedPassage(revision(searched), cited(510, 520))).toBe(-1);
    // Nowhere the step read, or no source opened.
    expect(citedPassage(revision(searched), cited(20_000, 20_010))).toBe(-1);
    expect(citedPassage(revision(searched), null)).toBe(-1);
  });
});

describe('a chunk an InfMem read never read', () => {
  const chunks = Array.from({ length: 20 }, (_, i) => ({ start: i * 1000, end: (i + 1) * 1000, tokens: 5000 }));
  const stopped = { status: 'done' as const, chunks, infmem: { votes: 3, history: [], stopped: { index: 3, votes: 3 } } };

  it('is opened by its index once the read stopped before it, and not while reading, after a full read or past the book', () => {
    expect(neverReadChunk(stopped, 12)).toEqual({ index: 12, start: 12_000, end: 13_000 });
    expect(neverReadChunk(stopped, 3)).toEqual({ index: 3, start: 3000, end: 4000 });
    // A chunk it read is a revision's, and nothing was selected, or the index is past the book.
    expect(neverReadChunk(stopped, 2)).toBeNull();
    expect(neverReadChunk(stopped, null)).toBeNull();
    expect(neverReadChunk(stopped, 20)).toBeNull();
    // Still reading: a chunk not read yet may be read; and a read that never stopped has no chunk it never read.
    expect(neverReadChunk({ ...stopped, status: 'running' }, 12)).toBeNull();
    expect(neverReadChunk({ ...stopped, infmem: { votes: 0, history: [] } }, 12)).toBeNull();
  });

  it('names the searches that retrieved its passages, each step once with its passages', () => {
    const second = { ...revision({ stop: false, queries: ['mill'], votes: 0, retrieved: [passage(12_500, 12), passage(500), passage(12_700, 12)] }), index: 1 };
    expect(retrievedFrom([revision(searched), second, revision(undefined)], 12)).toEqual([
      { step: 0, ks: [3] },
      { step: 1, ks: [1, 3] },
    ]);
    expect(retrievedFrom([revision(searched)], 5)).toEqual([]);
  });

  it("opens a passage marked in its chunk, or, where it holds a source's sentence, on that sentence", () => {
    const p = passage(12_000, 12);
    expect(passageTarget(p, null)).toEqual({ revision: 12, start: 12_000, end: 12_100 });
    expect(passageTarget(p, { start: 12_040, end: 12_090 })).toEqual({ revision: 12, start: 12_040, end: 12_090 });
    // A sentence outside it leaves the passage marked.
    expect(passageTarget(p, { start: 500, end: 520 })).toEqual({ revision: 12, start: 12_000, end: 12_100 });
  });
});
