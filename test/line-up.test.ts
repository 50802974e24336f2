import { describe, expect, it } from 'vitest';
import { chunkAtPlace } from '../src/core/line-up';

describe('lining two runs up by their place in the book', () => {
  // One run in chunks of 100 characters, the other in chunks of 250; the second skimmed past 500–750.
  const small = Array.from({ length: 10 }, (_, i) => ({ start: i * 100, end: (i + 1) * 100 }));
  const large = [
    { start: 0, end: 250 },
    { start: 250, end: 500 },
    { start: 750, end: 1000 },
  ];

  it('finds the chunk of a run of another chunk size that reads the same place', () => {
    expect(small.map((c) => chunkAtPlace(large, c.start))).toEqual([0, 0, 0, 1, 1, -1, -1, -1, 2, 2]);
    expect(large.map((c) => chunkAtPlace(small, c.start))).toEqual([0, 2, 7]);
  });

  it('finds none before a run starts or past where it has read', () => {
    expect(chunkAtPlace(large, 1000)).toBe(-1);
    expect(chunkAtPlace([], 0)).toBe(-1);
  });
});
