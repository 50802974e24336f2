/** Whole numbers as the command line prints them everywhere, with thousands separators: 1,016 chunks, 99,736 tokens. */
const WHOLE = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });

export function whole(n: number): string {
  return WHOLE.format(n);
}
