import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { extractAnswer } from '../src/core/answer';
import { pyRound, pySplit, pyStrip } from '../src/core/pytext';
import type { MethodId } from '../src/eval/method';
import { f1Score, normalizeAnswer, paperF1, paperMetrics, type PaperScores, scorePrediction } from '../src/eval/paper-score';

interface Case {
  name: string;
  method: MethodId;
  reply: string;
  answers: string[];
  /** What the paper's scoring records for this reply; null when it leaves the item out. */
  expected: { prediction: string | null; sub_em: number; em: number; f1: number } | null;
}

/** Replies made for these tests, with what the paper's own scorer made of each (see the file's "about"). */
const fixture = JSON.parse(readFileSync(new URL('./fixtures/paper-scorer-cases.json', import.meta.url), 'utf8')) as {
  cases: Case[];
  recurrentMetrics: { sub_em: number; em: number; f1: number };
  normalized: Record<string, string>;
};

/** One final reply scored as the method scores it: null when the reply is empty (a failed request). */
function score(c: Case): (PaperScores & { prediction: string | null }) | null {
  if (c.reply === '') return null;
  const prediction = extractAnswer(c.reply, c.method);
  return { prediction, ...scorePrediction(prediction, c.answers) };
}

describe("the paper's scorer", () => {
  it.each(fixture.cases.map((c) => [c.name, c] as const))('%s', (_name, c) => {
    const s = score(c);
    // The paper records f1 rounded to two decimals; the sample keeps it whole.
    expect(s && { ...s, f1: paperF1(s) }).toEqual(c.expected);
  });

  it('keeps each sample’s f1 at full precision', () => {
    const s = scorePrediction('the river Aume', ['Aume']);
    expect(s.f1).toBe(f1Score('the river Aume', 'Aume'));
    expect(s.f1).toBeCloseTo(2 / 3, 12);
    expect(paperF1(s)).toBe(0.67);
  });

  it('normalises exactly as the paper does', () => {
    for (const [text, normal] of Object.entries(fixture.normalized)) expect(normalizeAnswer(text), JSON.stringify(text)).toBe(normal);
  });

  it("averages a dataset's scored samples as unrounded percentages that round to the paper's figures, failed ones left out", () => {
    const scored = fixture.cases.filter((c) => c.method === 'recurrent').flatMap((c) => score(c) ?? []);
    expect(scored.length).toBe(fixture.cases.filter((c) => c.method === 'recurrent' && c.reply !== '').length);
    const metrics = paperMetrics(scored)!;
    expect({ sub_em: pyRound(metrics.sub_em, 2), em: pyRound(metrics.em, 2), f1: pyRound(metrics.f1, 2) }).toEqual(fixture.recurrentMetrics);
    const paperF1Mean = (scored.reduce((n, s) => n + paperF1(s), 0) * 100) / scored.length;
    expect(metrics.f1).toBe(paperF1Mean);
    expect(paperMetrics([])).toBeNull();
  });

  it('scores no answer 0 on every metric, whatever the reference', () => {
    expect(scorePrediction(null, ['Paris'])).toEqual({ sub_em: 0, em: 0, f1: 0 });
    expect(scorePrediction('', [''])).toEqual({ sub_em: 0, em: 0, f1: 0 });
  });
});

describe('Python string semantics', () => {
  it('strips and splits on Python whitespace, not JavaScript’s', () => {
    expect(pyStrip('\u001c Paris \u0085')).toBe('Paris');
    expect(pyStrip('\ufeffParis\ufeff')).toBe('\ufeffParis\ufeff');
    expect(pyStrip('..Paris. .', '.')).toBe('Paris. ');
    expect(pySplit(' a\u001fb\u3000c ')).toEqual(['a', 'b', 'c']);
    expect(pySplit('   ')).toEqual([]);
  });

  it('rounds halfway cases to even, as round() does', () => {
    expect([0.125, 0.375, 0.625, 0.875].map((x) => pyRound(x, 2))).toEqual([0.12, 0.38, 0.62, 0.88]);
    // Not exactly halfway in binary: rounded by their true value.
    expect([0.675, 0.665, 2 / 3, 0.8, 1].map((x) => pyRound(x, 2))).toEqual([0.68, 0.67, 0.67, 0.8, 1]);
    expect(pyRound(48.7142857, 2)).toBe(48.71);
    expect(pyRound(2.5, 0)).toBe(2);
  });
});
