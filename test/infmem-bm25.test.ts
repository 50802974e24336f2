/**
 * InfMem's retrieval: BM25 scores equal to rank_bm25's BM25Okapi (the
 * reference vector was computed by rank_bm25 itself, see
 * fixtures/infmem/bm25-reference.py), the units cut inside each chunk, and
 * the top four joined as the writer is given them.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { Bm25Okapi } from '../src/core/infmem/bm25';
import { bm25Tokens, cutDocument, UnitIndex } from '../src/core/infmem/retrieval';

interface Reference {
  units: string[];
  average_idf: number;
  idf: Record<string, number>;
  idf_order: string[];
  queries: { query: string; scores: number[] }[];
}

const REFERENCE = JSON.parse(readFileSync(new URL('./fixtures/infmem/bm25-reference.json', import.meta.url), 'utf8')) as Reference;

describe('BM25Okapi', () => {
  const bm25 = new Bm25Okapi(REFERENCE.units.map(bm25Tokens));

  it('scores every unit as rank_bm25 does, to 1e-12, for every query', () => {
    for (const { query, scores } of REFERENCE.queries) {
      const ours = bm25.scores(bm25Tokens(query));
      expect(ours).toHaveLength(scores.length);
      ours.forEach((s, i) => expect(Math.abs(s - scores[i]!), `${JSON.stringify(query)} unit ${i}`).toBeLessThanOrEqual(1e-12));
    }
  });

  it('floors only the words in more than half of the units, at epsilon times the average IDF summed in first-appearance order', () => {
    expect(Math.abs(bm25.averageIdf - REFERENCE.average_idf)).toBeLessThanOrEqual(1e-12);
    for (const word of REFERENCE.idf_order) expect(Math.abs(bm25.idfOf(word) - REFERENCE.idf[word]!), word).toBeLessThanOrEqual(1e-12);
    // "zed" is in exactly half of the units: an IDF of 0, left at 0; "ok" and "the" are in more than half: floored.
    expect(bm25.idfOf('zed')).toBe(0);
    expect(bm25.idfOf('ok')).toBeCloseTo(0.25 * bm25.averageIdf, 15);
    expect(bm25.idfOf('the')).toBe(bm25.idfOf('ok'));
  });

  it('splits on Python whitespace (U+3000, U+00A0, U+0085) and keeps punctuation on words', () => {
    expect(bm25Tokens('Paris,\u00a0the\u3000TOWER\u0085x\ufeffy')).toEqual(['paris,', 'the', 'tower', 'x\ufeffy']);
  });
});

describe('unit retrieval', () => {
  const index = new UnitIndex(REFERENCE.units.map((text) => ({ text })));

  it('ranks by score, ties by position, and fills the four with zero-score units when fewer score', () => {
    // Only units 0 and 4 hold "tower": the other two places go to the first zero-score units.
    expect(index.retrieve('tower')).toEqual([0, 4, 1, 2]);
    expect(index.retrieve('nowhere-to-be-found')).toEqual([0, 1, 2, 3]);
    const scores = REFERENCE.queries.find((q) => q.query === '1889 fair')!.scores;
    const best = scores.map((s, i) => [s, i] as const).sort((a, b) => b[0] - a[0] || a[1] - b[1]);
    expect(index.retrieve('1889 fair')).toEqual(best.slice(0, 4).map(([, i]) => i));
  });

  it('says when the cut after the fourth unit falls inside a tie of equal scores, where numpy may keep another unit', () => {
    const small = new UnitIndex(['a b', 'a c', 'a d', 'a e', 'f g', 'h i', 'j k', 'a l m'].map((text) => ({ text })));
    // Four of the units holding "a" score alike; the fifth, longer, scores less: the cut lies between two scores.
    expect(small.search('a')).toEqual({ units: [0, 1, 2, 3], tied: false });
    // One unit holds "f": the other three places go to zero-score units, and four more score zero as well.
    expect(small.search('f')).toEqual({ units: [4, 0, 1, 2], tied: true });
    expect(small.search('nothing')).toEqual({ units: [0, 1, 2, 3], tied: true });
    // With four units or fewer nothing is left out.
    expect(new UnitIndex(['a', 'b'].map((text) => ({ text }))).search('c')).toEqual({ units: [0, 1], tied: false });
  });

  it('joins the units as "[Retrieved #k] text" with a blank line between, text as it is', () => {
    expect(index.block([4, 0])).toBe(`[Retrieved #1] ${REFERENCE.units[4]}\n\n[Retrieved #2] ${REFERENCE.units[0]}`);
    expect(index.block([])).toBe('');
  });
});

describe('cutting the document', () => {
  // A stand-in codec: one id per character, so that token positions are character positions.
  const codec = { encode: (t: string) => [...t].map((c) => c.codePointAt(0)!), decode: (ids: readonly number[]) => String.fromCodePoint(...ids) };

  it('cuts chunks of the chunk size and units of the unit size inside each chunk, never across one', () => {
    const ids = codec.encode('abcdefghijklm');
    const { chunks, units } = cutDocument(ids, codec, 5, 2);
    expect(chunks.map((c) => c.text)).toEqual(['abcde', 'fghij', 'klm']);
    expect(units.map((u) => [u.text, u.chunk])).toEqual([
      ['ab', 0],
      ['cd', 0],
      ['e', 0],
      ['fg', 1],
      ['hi', 1],
      ['j', 1],
      ['kl', 2],
      ['m', 2],
    ]);
  });
});
