import type { Metric } from './tasks';

/**
 * Scorers, as RULER and the MemAgent evaluation define them. Each takes the
 * extracted answer and the reference strings and returns a score in [0, 1].
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

/** SQuAD-style normalisation: lower-case, no punctuation, no articles, single spaces. */
export function normalizeAnswer(text: string): string {
  return text
    .toLowerCase()
    .replace(/[\p{P}\p{S}]/gu, ' ')
    .replace(/\b(a|an|the)\b/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}

export function exactMatch(prediction: string, references: readonly string[]): number {
  const p = normalizeAnswer(prediction);
  return references.some((r) => normalizeAnswer(r) === p) ? 1 : 0;
}

/** 1 if a normalised reference occurs in the normalised prediction (MemAgent's "sub_em"). */
export function substringMatch(prediction: string, references: readonly string[]): number {
  const p = normalizeAnswer(prediction);
  return references.some((r) => {
    const n = normalizeAnswer(r);
    return n !== '' && p.includes(n);
  })
    ? 1
    : 0;
}

/** Token-level F1 against the best-matching reference. */
export function f1Score(prediction: string, references: readonly string[]): number {
  const p = normalizeAnswer(prediction).split(' ').filter(Boolean);
  let best = 0;
  for (const ref of references) {
    const r = normalizeAnswer(ref).split(' ').filter(Boolean);
    const left = new Map<string, number>();
    for (const t of r) left.set(t, (left.get(t) ?? 0) + 1);
    let same = 0;
    for (const t of p) {
      const n = left.get(t) ?? 0;
      if (n > 0) {
        same++;
        left.set(t, n - 1);
      }
    }
    if (same === 0) continue;
    const precision = same / p.length;
    const recall = same / r.length;
    best = Math.max(best, (2 * precision * recall) / (precision + recall));
  }
  return best;
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
 * All scores that apply to a metric. QA's headline is substring match, as in
 * MemAgent's RULER-HotpotQA numbers; exact match and F1 come alongside.
 */
export function scoreAnswer(metric: Metric, prediction: string, references: readonly string[]): Scores {
  if (metric === 'qa') {
    const s = {
      exactMatch: exactMatch(prediction, references),
      substringMatch: substringMatch(prediction, references),
      f1: f1Score(prediction, references),
    };
    return { score: s.substringMatch, ...s };
  }
  const all = stringMatchAll(prediction, references);
  const part = stringMatchPart(prediction, references);
  return { score: metric === 'string_match_all' ? all : part, stringMatchAll: all, stringMatchPart: part };
}
