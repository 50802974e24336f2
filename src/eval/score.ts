import type { Metric } from './tasks';

/**
 * Scorers for the generated tasks: RULER's string matching, and this app's
 * lenient QA scores (the paper's QA scorer, used with its method, is in
 * paper-score.ts). Each takes the extracted answer and the reference strings
 * and returns a score in [0, 1].
 */

/** RULER: the share of references found in the prediction (case-insensitive substring). */
export function stringMatchAll(prediction: string, references: readonly string[]): number {
  if (references.length === 0) return 0;
  const p = prediction.toLowerCase();
  return references.filter((r) => p.includes(r.toLowerCase())).length / references.length;
}

/** RULER: 1 if any reference is found in the prediction. */
export function stringMatchPart(prediction: string, references: readonly string[]): number {
  const p = prediction.toLowerCase();
  return references.some((r) => p.includes(r.toLowerCase())) ? 1 : 0;
}

/** This app's lenient normalisation: lower-case, any Unicode punctuation or symbol to a space, no articles, single spaces. */
export function lenientNormalize(text: string): string {
  return text
    .toLowerCase()
    .replace(/[\p{P}\p{S}]/gu, ' ')
    .replace(/\b(a|an|the)\b/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}

/** Lenient exact match: any reference equal to the prediction once both are normalised leniently. */
export function lenientExactMatch(prediction: string, references: readonly string[]): number {
  const p = lenientNormalize(prediction);
  return references.some((r) => lenientNormalize(r) === p) ? 1 : 0;
}

/** Lenient substring match: any non-empty normalised reference inside the normalised prediction (one way only). */
export function lenientSubstringMatch(prediction: string, references: readonly string[]): number {
  const p = lenientNormalize(prediction);
  return references.some((r) => {
    const n = lenientNormalize(r);
    return n !== '' && p.includes(n);
  })
    ? 1
    : 0;
}

/** Lenient token F1 against the best-matching reference. */
export function lenientF1(prediction: string, references: readonly string[]): number {
  const p = lenientNormalize(prediction).split(' ').filter(Boolean);
  let best = 0;
  for (const ref of references) {
    const r = lenientNormalize(ref).split(' ').filter(Boolean);
    const same = sharedTokens(p, r);
    if (same === 0) continue;
    const precision = same / p.length;
    const recall = same / r.length;
    best = Math.max(best, (2 * precision * recall) / (precision + recall));
  }
  return best;
}

/** Tokens the two lists share, counted with multiplicity (Counter intersection). */
export function sharedTokens(a: readonly string[], b: readonly string[]): number {
  const left = new Map<string, number>();
  for (const t of b) left.set(t, (left.get(t) ?? 0) + 1);
  let same = 0;
  for (const t of a) {
    const n = left.get(t) ?? 0;
    if (n > 0) {
      same++;
      left.set(t, n - 1);
    }
  }
  return same;
}

export interface Scores {
  /** The task's headline score: what the accuracy column averages. */
  score: number;
  stringMatchAll?: number;
  stringMatchPart?: number;
  exactMatch?: number;
  substringMatch?: number;
  f1?: number;
}

/**
 * All scores that apply to a metric. QA's headline is the lenient substring
 * match (the paper's tables report a substring match too, scored by its own
 * rules: see paper-score.ts); exact match and F1 come alongside.
 */
export function scoreAnswer(metric: Metric, prediction: string, references: readonly string[]): Scores {
  if (metric === 'qa') {
    const s = {
      exactMatch: lenientExactMatch(prediction, references),
      substringMatch: lenientSubstringMatch(prediction, references),
      f1: lenientF1(prediction, references),
    };
    return { score: s.substringMatch, ...s };
  }
  const all = stringMatchAll(prediction, references);
  const part = stringMatchPart(prediction, references);
  return { score: metric === 'string_match_all' ? all : part, stringMatchAll: all, stringMatchPart: part };
}
