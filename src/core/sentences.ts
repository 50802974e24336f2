/**
 * The one sentence segmenter: the extractive engine's memory and answer, the citation tracer and the
 * provenance marks all cut text here, so a sentence is the same sentence everywhere. Intl.Segmenter finds the
 * candidate ends (CJK 。！？ included); the breaks it puts after an abbreviation, an initial or an ellipsis, or
 * before a quotation's "said she", are taken back.
 */

export interface Span {
  start: number;
  end: number;
}

const sentenceSegmenter = new Intl.Segmenter(undefined, { granularity: 'sentence' });

/** Abbreviations that end no sentence, whatever follows them (titles, mostly), lower-cased without the point. */
const TITLES = new Set('mr mrs messrs ms mme mlle mm dr st ste mt rev revd col capt gen lt sgt maj prof hon esq sr jr fr bros e.g i.e cf viz vs'.split(' '));
/** Abbreviations that end no sentence before a number ("No. 5", "p. 12", "Dec. 11th"): "No." alone may well end one. */
const BEFORE_NUMBER = new Set('no nos p pp vol vols ch chap fig art sec jan feb mar apr jun jul aug sep sept oct nov dec'.split(' '));

/** Sentence spans of `text`, whitespace trimmed; line breaks that leave a blank line also end one. */
export function sentenceSpans(text: string): Span[] {
  const spans: Span[] = [];
  for (const block of splitOn(text, /\n\s*\n/g)) {
    // A single line break is a hard wrap, not a sentence end; same length, so offsets hold.
    const unwrapped = text.slice(block.start, block.end).replace(/\n/g, ' ');
    let open: Span | null = null;
    for (const seg of sentenceSegmenter.segment(unwrapped)) {
      const piece = trimSpan(seg.segment, block.start + seg.index);
      if (!piece) continue;
      if (open && !endsSentence(text.slice(open.start, open.end), text.slice(piece.start, piece.end))) open.end = piece.end;
      else {
        if (open) spans.push(open);
        open = piece;
      }
    }
    if (open) spans.push(open);
  }
  return spans;
}

/** Whether a break the segmenter found between `before` and `after`, both trimmed, is a sentence's end. */
function endsSentence(before: string, after: string): boolean {
  // A sentence does not begin in lower case: '"Stop!" cried she.', "Then… he left."
  if (/^[\p{Ps}\p{Pi}"'‘“(]*\p{Ll}/u.test(after)) return false;
  // An ellipsis trails off; what follows goes on with the same sentence.
  if (/(\.\s?\.\s?\.|…)[\p{Pf}\p{Pe}"'’”]*$/u.test(before)) return false;
  return !abbreviationEnds(before, after);
}

/**
 * Whether `before` (trimmed) ends in an abbreviation's point that ends no sentence before `after`: a title ("Mr."),
 * an initial ("J. R."), or "No."/"p." before a number. The chunker asks it too, so that no chunk ends inside a sentence.
 */
export function abbreviationEnds(before: string, after: string): boolean {
  const word = /(?:^|[^\p{L}.])([\p{L}.]+)\.$/u.exec(before)?.[1];
  if (word === undefined) return false;
  const lower = word.toLowerCase();
  if (TITLES.has(lower)) return true;
  if (BEFORE_NUMBER.has(lower) && /^\d/.test(after)) return true;
  // An initial: "J. R. Tolkien", "M. Waldman". "I." is the pronoun ending a sentence far more often.
  return /^\p{Lu}$/u.test(word) && word !== 'I';
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
