/** Language-aware sentence and word splitting (Intl.Segmenter handles CJK without spaces). */

export interface Span {
  start: number;
  end: number;
}

const sentenceSegmenter = new Intl.Segmenter(undefined, { granularity: 'sentence' });
const wordSegmenter = new Intl.Segmenter(undefined, { granularity: 'word' });

/** Sentence spans of `text`, whitespace trimmed; line breaks that leave a blank line also end one. */
export function sentenceSpans(text: string): Span[] {
  const spans: Span[] = [];
  for (const block of splitOn(text, /\n\s*\n/g)) {
    // A single line break is a hard wrap, not a sentence end; same length, so offsets hold.
    const unwrapped = text.slice(block.start, block.end).replace(/\n/g, ' ');
    for (const seg of sentenceSegmenter.segment(unwrapped)) {
      const trimmed = trimSpan(seg.segment, block.start + seg.index);
      if (trimmed) spans.push(trimmed);
    }
  }
  return spans;
}

function* splitOn(text: string, separator: RegExp): Generator<Span> {
  let start = 0;
  for (const m of text.matchAll(separator)) {
    yield { start, end: m.index };
    start = m.index + m[0].length;
  }
  yield { start, end: text.length };
}

function trimSpan(s: string, offset: number): Span | null {
  const lead = s.length - s.trimStart().length;
  const body = s.trim();
  return body ? { start: offset + lead, end: offset + lead + body.length } : null;
}

const STOPWORDS = new Set(
  (
    'a an and are as at be been but by can could did do does for from had has have he her his how i if in into is it its ' +
    'me my no not of on or our she so than that the their them then there these they this those to was we were what when ' +
    'where which who whom whose why will with would you your'
  ).split(' '),
);

/** Content words of `text`, lower-cased, with a plural "s" folded. */
export function terms(text: string): string[] {
  const out: string[] = [];
  for (const seg of wordSegmenter.segment(text.toLowerCase())) {
    if (!seg.isWordLike) continue;
    let w = seg.segment;
    if (STOPWORDS.has(w)) continue;
    if (w.length > 3 && w.endsWith('s') && !w.endsWith('ss')) w = w.slice(0, -1);
    out.push(w);
  }
  return out;
}
