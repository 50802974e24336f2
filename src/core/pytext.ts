/**
 * Python's string semantics where the paper's evaluation depends on them and
 * JavaScript's differ: which characters are whitespace for `str.strip()` and
 * `str.split()`, and how `round(x, n)` breaks ties.
 */

/**
 * Python's whitespace (`str.isspace`): JavaScript's `\s` lacks U+001C–U+001F
 * and U+0085, and adds U+FEFF, which Python keeps as text.
 */
export const PY_SPACE = '\\t\\n\\x0b\\x0c\\r\\x1c-\\x1f \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000';

const LEADING = new RegExp(`^[${PY_SPACE}]+`);
const TRAILING = new RegExp(`[${PY_SPACE}]+$`);
const RUNS = new RegExp(`[${PY_SPACE}]+`);

/** `s.strip()`, or `s.strip(chars)` with a set of characters to strip. */
export function pyStrip(s: string, chars?: string): string {
  if (chars === undefined) return s.replace(LEADING, '').replace(TRAILING, '');
  let start = 0;
  let end = s.length;
  while (start < end && chars.includes(s[start]!)) start++;
  while (end > start && chars.includes(s[end - 1]!)) end--;
  return s.slice(start, end);
}

/** `s.split()`: the words between runs of whitespace, none empty. */
export function pySplit(s: string): string[] {
  const t = pyStrip(s);
  return t === '' ? [] : t.split(RUNS);
}

/**
 * `round(x, digits)` for the non-negative scores it is used on: correctly
 * rounded from the double's exact value, ties to even. `toFixed` is correctly
 * rounded too but breaks exact ties upwards. A double is exactly halfway
 * between two n-digit decimals only if it is k / 2^(n+1) with k·5^n odd
 * (at two digits: 0.125, 0.375, …), the only case where the two differ.
 */
export function pyRound(x: number, digits: number): number {
  const k = x * 2 ** (digits + 1); // exact: a power of two
  const halves = k * 5 ** digits; // x · 2 · 10^n, exact when k is a small integer
  if (Number.isInteger(k) && Number.isSafeInteger(halves) && halves % 2 === 1) {
    const down = (halves - 1) / 2;
    return (down % 2 === 0 ? down : down + 1) / 10 ** digits;
  }
  return Number(x.toFixed(digits));
}
