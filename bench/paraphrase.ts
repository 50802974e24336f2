/**
 * Memories written the way a model rewrites its notes, made from the
 * extractive engine's (which copies the book's sentences as they are): a
 * fixed set of rewrites, applied to each note by a choice that depends on the
 * note and on how far the read has gone, so that the same fact is worded one
 * way for a few revisions and another way later, as a model's notes drift.
 * Deterministic: the same memories always give the same rewrites.
 */

/** Words a note-taker swaps for others; never a name or a number. */
const SYNONYMS: Record<string, string> = {
  gave: 'handed',
  sold: 'passed on',
  hid: 'stashed',
  later: 'afterwards',
  named: 'called',
  called: 'known as',
  beneath: 'under',
  built: 'constructed',
  born: 'came into the world',
  keeps: 'holds',
  works: 'is employed',
  married: 'wed',
  favourite: 'preferred',
  guarded: 'watched over',
  known: 'famous',
  special: 'particular',
  numbers: 'codes',
  old: 'ancient',
  sailor: 'seaman',
  trader: 'merchant',
  town: 'settlement',
};

/** Thousands separators in every number of five digits or more ("1234567" → "1,234,567"): how the answer is written too. */
export function groupDigits(s: string): string {
  return s.replace(/\b\d{5,}\b/g, (n) => Number(n).toLocaleString('en'));
}

/** Note style: articles dropped. */
function dropArticles(s: string): string {
  return s.replace(/\b(?:[Aa]n?|[Tt]he) /g, '').replace(/^\p{Ll}/u, (c) => c.toUpperCase());
}

function swapWords(s: string): string {
  return s.replace(/\b\p{L}+\b/gu, (w) => SYNONYMS[w] ?? w);
}

/** The needle's sentence as a note: "witty-lake: magic code 1,234,567". */
function needleNote(s: string): string {
  const m = /^One of the special magic (\w+?)s? for (.+?) is: (.+?)\.?$/.exec(s);
  return m ? `${m[2]!.replace(/-/g, ' ')}: magic ${m[1]} ${m[3]}` : s;
}

/** The last phrase of place or time moved to the front: "At Quennby, Kastell hid it beneath the old mill." */
function frontPhrase(s: string): string {
  const m = /^(.+) ((?:at|in|on|from|to|beneath) [^,;]+?)\.?$/.exec(s);
  if (!m) return s;
  return `${m[2]!.charAt(0).toUpperCase()}${m[2]!.slice(1)}, ${m[1]}.`;
}

/** The rewrites, each a composition; a note keeps one for a few revisions, then drifts to the next. */
const REWRITES: ((s: string) => string)[] = [
  (s) => groupDigits(swapWords(s)),
  (s) => dropArticles(groupDigits(needleNote(s))),
  (s) => frontPhrase(swapWords(groupDigits(s))),
  (s) => dropArticles(swapWords(needleNote(s))),
];

/** Revisions for which a note keeps one wording. */
const DRIFT = 6;

function hash(s: string): number {
  let h = 2166136261;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 16777619);
  return h >>> 0;
}

/** The memory of revision `revision` rewritten; every second revision-era pair of notes is joined into one line. */
export function paraphraseMemory(memory: string, revision: number): string {
  const era = Math.floor(revision / DRIFT);
  const lines = memory
    .split('\n')
    .filter((l) => l.trim())
    .map((line) => REWRITES[(hash(line) + era) % REWRITES.length]!(line.trim()));
  if (era % 2 === 0) return lines.join('\n');
  const joined: string[] = [];
  for (let i = 0; i < lines.length; i += 2) joined.push(lines[i + 1] ? `${lines[i]!.replace(/\.$/, '')}; ${lines[i + 1]}` : lines[i]!);
  return joined.join('\n');
}
