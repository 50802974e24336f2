import { describe, expect, it } from 'vitest';
import { citedPassage, planEntry, planWords } from '../src/ui/inspector/infmem-plan';
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
