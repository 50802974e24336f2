/** Language-aware word splitting (Intl.Segmenter handles CJK without spaces); sentences are cut in sentences.ts. */

import { fold } from './fold';

export { sentenceSpans, type Span } from './sentences';

const wordSegmenter = new Intl.Segmenter(undefined, { granularity: 'word' });

const STOPWORDS = new Set(
  (
    'a an and are as at be been but by can could did do does for from had has have he her his how i if in into is it its ' +
    'me my no not of on or our she so than that the their them then there these they this those to was we were what when ' +
    'where which who whom whose why will with would you your'
  ).split(' '),
);

/** Content words of `text`, folded for matching (core/fold: case, accents, width), with a plural "s" folded. */
export function terms(text: string): string[] {
  const out: string[] = [];
  for (const seg of wordSegmenter.segment(fold(text))) {
    if (!seg.isWordLike) continue;
    let w = seg.segment;
    if (STOPWORDS.has(w)) continue;
    if (w.length > 3 && w.endsWith('s') && !w.endsWith('ss')) w = w.slice(0, -1);
    out.push(w);
  }
  return out;
}
