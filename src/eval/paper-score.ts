import { PY_SPACE, pyRound, pySplit } from '../core/pytext';
import { sharedTokens } from './score';

/**
 * The paper's QA scorer, rule for rule (its `normalize_answer`, `em`, `sub_em`
 * and `f1`), with Python's string semantics where JavaScript's differ.
 */

// Python's string.punctuation: ASCII only, so "1,000" → "1000" and "U.S." → "us", while "’" stays.
const PUNCTUATION = /[!"#$%&'()*+,\-./:;<=>?@[\\\]^_`{|}~]/g;
// \b in Python's re is Unicode-aware (letters, digits and _ are word characters; marks are not); JavaScript's is ASCII-only.
const ARTICLES = /(?<![\p{L}\p{N}_])(?:a|an|the)(?![\p{L}\p{N}_])/gu;
const SPACE_RUNS = new RegExp(`[${PY_SPACE}]+`);

/** Lower-case, every ASCII punctuation character deleted, the words a/an/the replaced by a space, whitespace collapsed. */
export function normalizeAnswer(text: string): string {
  return pySplit(text.toLowerCase().replace(PUNCTUATION, '').replace(ARTICLES, ' ')).join(' ');
}

/** 1 when prediction and reference are equal once normalised. */
export function exactMatchScore(prediction: string, reference: string): 0 | 1 {
  return normalizeAnswer(prediction) === normalizeAnswer(reference) ? 1 : 0;
}

/** 1 when either normalised string contains the other (so an answer that normalises to nothing matches). */
export function subExactMatchScore(prediction: string, reference: string): 0 | 1 {
  const p = normalizeAnswer(prediction);
  const r = normalizeAnswer(reference);
  return r.includes(p) || p.includes(r) ? 1 : 0;
}

const CLOSED = new Set(['yes', 'no', 'noanswer']);

/** Token F1 over normalised words; 0 when either side is yes, no or noanswer and the two differ. */
export function f1Score(prediction: string, reference: string): number {
  const p = normalizeAnswer(prediction);
  const r = normalizeAnswer(reference);
  if ((CLOSED.has(p) || CLOSED.has(r)) && p !== r) return 0;
  const pt = p.split(SPACE_RUNS).filter(Boolean);
  const rt = r.split(SPACE_RUNS).filter(Boolean);
  const same = sharedTokens(pt, rt);
  if (same === 0) return 0;
  const precision = same / pt.length;
  const recall = same / rt.length;
  return (2 * precision * recall) / (precision + recall);
}

/** One sample's scores: sub_em and em 0 or 1, f1 at full precision (the paper's record rounds it to two decimals: `paperF1`). */
export interface PaperScores {
  sub_em: 0 | 1;
  em: 0 | 1;
  f1: number;
}

/**
 * Scores an extracted answer against the first reference only, as the paper
 * does. No answer (null or empty) scores 0 on every metric.
 */
export function scorePrediction(prediction: string | null, answers: readonly string[]): PaperScores {
  const gold = answers[0];
  if (!prediction || gold === undefined) return { sub_em: 0, em: 0, f1: 0 };
  return {
    sub_em: subExactMatchScore(prediction, gold),
    em: exactMatchScore(prediction, gold),
    f1: f1Score(prediction, gold),
  };
}

/** A sample's f1 as the paper's scorer records it, rounded to two decimals, which is what its averages are taken over. */
export function paperF1(scores: PaperScores): number {
  return pyRound(scores.f1, 2);
}

/** A dataset's metrics: percentages, as the paper's tables give them. */
export interface PaperMetrics {
  sub_em: number;
  em: number;
  f1: number;
}

/**
 * The mean of each metric over the scored samples, as a percentage at full
 * precision (tables round it to two decimals, as the paper prints it); f1 is
 * averaged over the per-sample values the paper records. Null when none was scored.
 */
export function paperMetrics(samples: readonly PaperScores[]): PaperMetrics | null {
  if (samples.length === 0) return null;
  const mean = (pick: (s: PaperScores) => number) => (samples.reduce((n, s) => n + pick(s), 0) * 100) / samples.length;
  return { sub_em: mean((s) => s.sub_em), em: mean((s) => s.em), f1: mean(paperF1) };
}
