import { nameMentions, skimTerms } from '../skim';

/**
 * The keys a sentence is matched by when a citation is traced: its content
 * words (lower case, plurals folded, stopwords out), names and numbers, with
 * numbers and dates written one way whatever way the text wrote them
 * ("1,000" and "1000"; "12 March 1815", "March 12th, 1815", "1815-03-12" and
 * "1815年3月12日"; "twenty-five" and "25"), and Chinese or Japanese text as
 * character pairs, which do not depend on where a segmenter puts word breaks.
 */

const MONTHS = ['january', 'february', 'march', 'april', 'may', 'june', 'july', 'august', 'september', 'october', 'november', 'december'];
const MONTH_BY_ABBREVIATION = new Map<string, string>([...MONTHS.map((m) => [m.slice(0, 3), m] as const), ['sept', 'september']]);

const UNITS = new Map<string, number>(
  'zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen'
    .split(' ')
    .map((w, i) => [w, i]),
);
const TENS = new Map<string, number>('twenty thirty forty fifty sixty seventy eighty ninety'.split(' ').map((w, i) => [w, (i + 2) * 10]));
const SCALES = new Map<string, number>([
  ['hundred', 100],
  ['thousand', 1_000],
  ['million', 1_000_000],
  ['billion', 1_000_000_000],
]);
const ORDINALS = new Map<string, number>(
  'first second third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth'.split(' ').map((w, i) => [w, i + 1]),
);

/** Words that say nothing about a fact, beyond the stopwords every search drops. */
const FILLER = new Set(
  (
    'also about after again all any been being both but can could each even ever into just more most much must not ' +
    'only other over same should some such than then very would yet he she his her him hers they them we our us me my ' +
    'those whom whose while if so nor'
  ).split(' '),
);

const DIGITS = /^\p{Nd}+$/u;
// A word written in lower case: a name is never written so.
const LOWER_WORD = /(?<![\p{L}\p{N}'’-])\p{Ll}[\p{L}'’]*/gu;
// "twenty-five" is read as the two number words it is, not as a hyphenated key.
const TENS_HYPHEN = /\b(twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety)-(one|two|three|four|five|six|seven|eight|nine)\b/gi;
const CJK = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}]/u;

/**
 * A text with its numbers and dates written one way, before it is split into
 * words: digit groups joined ("1,234,567"), ordinal endings dropped ("12th"),
 * ISO and Chinese-style dates spelled "12 march 1815", and digits set apart
 * from Chinese characters so that each is a word of its own.
 */
export function normalizeNumbers(text: string): string {
  let t = /[\uFF10-\uFF19\uFF0C\uFF0E]/.test(text) ? text.normalize('NFKC') : text;
  t = t.replace(/\b(\d{4})-(\d{1,2})-(\d{1,2})\b/g, (whole, y: string, m: string, d: string) => dateWords(whole, y, m, d));
  t = t.replace(/(\d{1,4})\s*年\s*(\d{1,2})\s*月\s*(\d{1,2})\s*[日号]/g, (whole, y: string, m: string, d: string) => ` ${dateWords(whole, y, m, d)} `);
  t = t.replace(/\d{1,3}(?:,\d{3})+(?!\d)/g, (n) => n.replace(/,/g, ''));
  t = t.replace(/(\d)(?:st|nd|rd|th)\b/gi, '$1');
  t = t.replace(TENS_HYPHEN, '$1 $2');
  if (CJK.test(t)) t = t.replace(/(\p{Nd}+)/gu, ' $1 ');
  return t;
}

function dateWords(whole: string, year: string, month: string, day: string): string {
  const name = MONTHS[Number(month) - 1];
  return name && Number(day) >= 1 && Number(day) <= 31 ? `${Number(day)} ${name} ${year}` : whole;
}

/**
 * A word as a key: plurals and the endings -ed and -ing folded ("cities",
 * "boxes", "guarded", "guarding"), a number without leading zeros, a month by
 * its whole name. Rough, but the same on every side of a match.
 */
function fold(word: string): string {
  if (DIGITS.test(word)) return word.replace(/^0+(?=\d)/, '');
  const month = MONTH_BY_ABBREVIATION.get(word);
  if (month) return month;
  if (word.length > 4 && /(?:ies|ied)$/.test(word)) return `${word.slice(0, -3)}y`;
  if (word.length > 4 && /(?:x|ch|sh|ss)es$/.test(word)) return word.slice(0, -2);
  if (word.length > 3 && word.endsWith('s') && !word.endsWith('ss') && !word.endsWith('us')) return word.slice(0, -1);
  const ending = /(?:ing|ed)$/.exec(word);
  if (ending && word.length - ending[0].length >= 4 && !CJK.test(word)) return word.slice(0, -ending[0].length);
  return word;
}

/** Number words turned into digits: "twenty-five" and "one hundred and five" (the "and" is a stopword already) become "25" and "105". */
function spellNumbers(words: readonly string[]): string[] {
  const out: string[] = [];
  let total = 0;
  let current = 0;
  let inNumber = false;
  const flush = () => {
    if (inNumber) out.push(String(total + current));
    total = current = 0;
    inNumber = false;
  };
  for (const w of words) {
    const unit = UNITS.get(w) ?? TENS.get(w);
    const scale = SCALES.get(w);
    if (unit !== undefined) {
      // "five six" is two numbers; "twenty five" is one.
      if (inNumber && current % 100 !== 0 && !(current % 10 === 0 && unit < 10 && current >= 20)) flush();
      current += unit;
      inNumber = true;
    } else if (scale !== undefined && (inNumber || out.length === 0 || !DIGITS.test(out[out.length - 1]!))) {
      current = (current || 1) * scale;
      if (scale > 100) {
        total += current;
        current = 0;
      }
      inNumber = true;
    } else if (scale !== undefined) {
      // "3 thousand": the digits just written take the scale.
      out.push(String(Number(out.pop()) * scale));
    } else {
      flush();
      const ordinal = ORDINALS.get(w);
      out.push(ordinal === undefined ? w : String(ordinal));
    }
  }
  flush();
  return out;
}

/** The keys of a text, in order, repeats kept. */
export function keysOf(text: string): string[] {
  const words = skimTerms(normalizeNumbers(text)).filter((w) => !FILLER.has(w));
  return spellNumbers(words).map(fold);
}

/**
 * Keys that name something in `texts`: numbers, hyphenated keys, and words
 * capitalised inside a sentence (see nameMentions) that the texts never write
 * in lower case: "Victor" is a name, "Now," after an opening quote is not,
 * since "now" is written elsewhere.
 */
export function nameKeys(texts: readonly string[]): Set<string> {
  const lower = new Set<string>();
  const capitalised: string[] = [];
  const out = new Set<string>();
  for (const text of texts) {
    const normal = normalizeNumbers(text);
    for (const m of normal.matchAll(LOWER_WORD)) for (const k of keysOf(m[0])) lower.add(k);
    for (const m of nameMentions(normal)) {
      if (/[\p{N}-]/u.test(m.name)) for (const k of keysOf(m.name)) out.add(k);
      else capitalised.push(...keysOf(m.name));
    }
  }
  for (const k of capitalised) if (!lower.has(k)) out.add(k);
  return out;
}

/** Whether a key is a number. */
export function isNumberKey(key: string): boolean {
  return DIGITS.test(key);
}

/** Whether a key is a pair of Chinese or Japanese characters. */
export function isCjkKey(key: string): boolean {
  return CJK.test(key);
}

/**
 * How much a key says about a fact, before its rarity is counted: a long
 * number or a name far more than a common word; a one-digit number or a short
 * word less.
 */
export function keyShape(key: string, names: ReadonlySet<string>): number {
  if (isNumberKey(key)) return 1 + Math.min(key.length, 7) / 3;
  if (names.has(key)) return 2;
  if (isCjkKey(key)) return 1;
  return key.length <= 3 ? 0.7 : 1;
}
