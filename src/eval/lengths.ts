/** Document lengths as people write them: 8k = 8,192 tokens, 1m = 1,048,576, as RULER counts. */

const UNITS: Record<string, number> = { '': 1, k: 1024, m: 1024 * 1024 };

export const MIN_LENGTH = 1024;
export const MAX_LENGTH = 64 * 1024 * 1024;

/** "8k", "32K", "1m", "3.5m" or "5000" → tokens; throws a RangeError that says what is wrong. */
export function parseLength(text: string): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*([kKmM]?)\s*$/.exec(text);
  if (!m) throw new RangeError(`"${text}" is not a length: write it like 8k, 128k or 1m.`);
  const tokens = Math.round(Number(m[1]) * UNITS[m[2]!.toLowerCase()]!);
  if (tokens < MIN_LENGTH || tokens > MAX_LENGTH) {
    throw new RangeError(`${text} is out of range: lengths go from 1k to 64m tokens.`);
  }
  return tokens;
}

/** A comma-separated list of lengths, sorted, without repeats. */
export function parseLengths(text: string): number[] {
  const out = text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map(parseLength);
  if (out.length === 0) throw new RangeError('Give at least one length, such as 8k.');
  return [...new Set(out)].sort((a, b) => a - b);
}

/** 8192 → "8K", 1048576 → "1M", 3670016 → "3.5M"; other numbers as they are. */
export function formatLength(tokens: number): string {
  const m = tokens / UNITS.m!;
  if (tokens >= UNITS.m! && Number.isInteger(m * 10)) return `${m}M`;
  const k = tokens / UNITS.k!;
  if (Number.isInteger(k * 10)) return `${k}K`;
  return tokens.toLocaleString('en');
}

/** Lengths the paper and RULER report, offered as choices. */
export const STANDARD_LENGTHS: readonly number[] = [8, 16, 32, 64, 128, 256, 512, 1024, 2048].map((k) => k * 1024);
