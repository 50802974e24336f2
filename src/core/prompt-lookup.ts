/**
 * Prompt-lookup drafting: a rewritten memory repeats the previous memory and
 * copies from the section, so the tokens that follow the latest few written
 * tokens are often already in the prompt. The draft is what followed their
 * most recent earlier occurrence there, or in the reply itself.
 */

export interface LookupOptions {
  /** The longest n-gram looked up (the longest that matches wins). */
  maxNgram: number;
  /** The shortest n-gram that may still draft. */
  minNgram: number;
  /** At most this many drafted tokens. */
  maxDraft: number;
}

export const DEFAULT_LOOKUP: LookupOptions = { maxNgram: 4, minNgram: 1, maxDraft: 8 };

/**
 * Up to `maxDraft` tokens that followed the most recent earlier occurrence of
 * the longest suffix (n ≤ maxNgram tokens) of `prompt` + `written`; empty when
 * no suffix of at least `minNgram` tokens occurred before.
 */
export function lookupDraft(prompt: readonly number[], written: readonly number[], options: LookupOptions = DEFAULT_LOOKUP): number[] {
  const total = prompt.length + written.length;
  const at = (i: number) => (i < prompt.length ? prompt[i]! : written[i - prompt.length]!);
  if (options.maxDraft <= 0) return [];
  for (let n = Math.min(options.maxNgram, total - 1); n >= Math.max(1, options.minNgram); n--) {
    const tail = total - n;
    // Latest start first; a match must leave at least one token after it before the suffix itself.
    for (let start = tail - 1; start >= 0; start--) {
      let same = true;
      for (let j = 0; j < n && same; j++) same = at(start + j) === at(tail + j);
      if (!same) continue;
      const from = start + n;
      const end = Math.min(total, from + options.maxDraft);
      const draft: number[] = [];
      for (let i = from; i < end; i++) draft.push(at(i));
      return draft;
    }
  }
  return [];
}
