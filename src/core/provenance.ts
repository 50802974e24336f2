import { type Span, sentenceSpans, terms } from './text';

/**
 * Sentences of a section that a memory drew on: those whose content words are
 * mostly present in the memory. A cheap, model-free reading of what was kept.
 */
export function sentencesDrawnOn(section: string, memory: string, threshold = 0.6): Span[] {
  const kept = new Set(terms(memory));
  if (kept.size === 0) return [];
  return sentenceSpans(section).filter((s) => {
    const words = terms(section.slice(s.start, s.end));
    if (words.length < 2) return false;
    const hits = words.reduce((n, w) => n + (kept.has(w) ? 1 : 0), 0);
    return hits / words.length >= threshold;
  });
}
