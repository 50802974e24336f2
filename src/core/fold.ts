/**
 * Text as matching compares it, the way a reader expects: "Borodino" finds "Borodinó", "karataev" finds
 * "Karatáev", full-width "Ｎａｔａｓｈａ" finds "Natasha" and "ﬁre" finds "fire". The memory search, skim and the
 * extractive engine all compare through this one function. It is for comparing only: what is shown, stored or
 * written keeps its own characters.
 */

// The accents of Latin, Greek and Cyrillic letters once decomposed. Other scripts' marks (kana's voicing marks,
// Indic vowel signs) make another letter, not an accented one, so they are kept.
const ACCENTS = /[\u0300-\u036f]/g;
// Text of printable ASCII and line breaks folds to its lower case alone; anything else takes the full fold.
const NON_ASCII = /[^ -~\t\n\r]/;

/** `text` folded for matching: compatibility forms made plain (width, ligatures), accents dropped, lower case. */
export function fold(text: string): string {
  if (!NON_ASCII.test(text)) return text.toLowerCase();
  return text.normalize('NFKD').replace(ACCENTS, '').normalize('NFKC').toLowerCase();
}

const graphemes = new Intl.Segmenter(undefined, { granularity: 'grapheme' });

/**
 * `text` folded, with where each of its code units came from in `text`: code unit i of `folded` belongs to the
 * character at [from[i], to[i]) of `text`. A match found in the folded text is marked on the characters it came from.
 */
export function foldMapped(text: string): { folded: string; from: number[]; to: number[] } {
  const from: number[] = [];
  const to: number[] = [];
  if (!NON_ASCII.test(text)) {
    for (let i = 0; i < text.length; i++) {
      from.push(i);
      to.push(i + 1);
    }
    return { folded: text.toLowerCase(), from, to };
  }
  let folded = '';
  // By characters as a reader sees them (a letter with its accents), so that an accent written apart folds with its letter.
  for (const { segment, index } of graphemes.segment(text)) {
    const f = fold(segment);
    folded += f;
    for (let k = 0; k < f.length; k++) {
      from.push(index);
      to.push(index + segment.length);
    }
  }
  return { folded, from, to };
}

/** Whether `text` holds every word of `query`, each matched folded (core/fold) and anywhere: a search box's test. */
export function holdsWords(text: string, query: string): boolean {
  const folded = fold(text);
  return fold(query)
    .split(/\s+/)
    .filter(Boolean)
    .every((w) => folded.includes(w));
}
