import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { diffMemory } from '../src/core/memory-diff';
import { sentencesDrawnOn } from '../src/core/provenance';

const side = (parts: ReturnType<typeof diffMemory>['parts'], drop: 'added' | 'removed') =>
  parts
    .filter((p) => p.kind !== drop)
    .map((p) => p.text)
    .join('');

describe('memory diffs', () => {
  it('mark a newly kept sentence as added, and nothing else', () => {
    const before = 'Victor left Geneva.\nHe studied at Ingolstadt.';
    const after = `${before}\nThe vault code for the Marlowe archive is 4829137.`;
    const d = diffMemory(before, after);
    expect(
      d.parts
        .filter((p) => p.kind === 'added')
        .map((p) => p.text)
        .join(''),
    ).toContain('4829137');
    expect(d.parts.some((p) => p.kind === 'removed')).toBe(false);
    expect(d.wordsAdded).toBe(9);
    expect(d.wordsRemoved).toBe(0);
  });

  it('rebuild both memories from their parts (word diffs keep the new whitespace), for small edits and total rewrites alike', () => {
    const words = fc.array(fc.constantFrom('the', 'code', 'Victor', 'is', '4829137', 'archive', 'ice', 'north'), { maxLength: 300 });
    const memory = fc
      .tuple(words, fc.integer({ min: 1, max: 12 }))
      .map(([w, every]) => w.map((x, i) => (i % every === every - 1 ? `${x}.\n` : `${x} `)).join(''));
    fc.assert(
      fc.property(memory, memory, (before, after) => {
        const d = diffMemory(before, after);
        const squash = (t: string) => t.replace(/\s+/g, '');
        expect(squash(side(d.parts, 'added'))).toBe(squash(before));
        expect(side(d.parts, 'removed')).toBe(after);
      }),
      { numRuns: 150 },
    );
  });

  it('compare whole lines when a memory is rewritten from scratch, instead of an unbounded word diff', () => {
    const a = Array.from({ length: 60 }, (_, i) => `Sentence ${i} about the creature and Victor in Geneva.`).join('\n');
    const b = Array.from({ length: 60 }, (_, i) => `Completely different ${i * 7} words for the test.`).join('\n');
    const d = diffMemory(a, b);
    // A word diff would interleave hundreds of small parts (and take seconds); the line diff is one block out, one in.
    expect(d.parts.map((p) => p.kind)).toEqual(['removed', 'added']);
    expect(side(d.parts, 'added')).toBe(a);
    expect(side(d.parts, 'removed')).toBe(b);
  });
});

describe('sentences a memory drew on', () => {
  it('are the section sentences whose words the memory mostly holds', () => {
    const section = 'The night was cold. The vault code for the Marlowe archive is 4829137. Nobody came.';
    const spans = sentencesDrawnOn(section, 'Notes: the vault code for the Marlowe archive is 4829137.');
    expect(spans.map((s) => section.slice(s.start, s.end))).toEqual(['The vault code for the Marlowe archive is 4829137.']);
  });
});
