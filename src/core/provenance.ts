import { type Span, sentenceSpans, terms } from './text';

/**
 * Sentences of a section that a memory drew on: those whose content words are
 * mostly present in the memory. A cheap, model-free reading of what was kept.
 */
export function sentencesDrawnOn(section: string, memory: string, threshold = 0.6): Span[] {
  const out: Span[] = [];
  for (const s of judgeSentences(section, memory, threshold)) if (s) out.push(s);
  return out;
}

/**
 * The same judgement one sentence at a time: each sentence's span if the memory
 * drew on it, else null. A caller on a page's main thread spreads a long
 * section over several short tasks by pausing between sentences.
 */
export function* judgeSentences(section: string, memory: string, threshold = 0.6): Generator<Span | null> {
  const kept = new Set(terms(memory));
  if (kept.size === 0) return;
  for (const s of sentenceSpans(section)) {
    const words = terms(section.slice(s.start, s.end));
    const hits = words.reduce((n, w) => n + (kept.has(w) ? 1 : 0), 0);
    yield words.length >= 2 && hits / words.length >= threshold ? s : null;
  }
}
