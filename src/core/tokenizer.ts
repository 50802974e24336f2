/** A run of text that never shares a token with its neighbours. */
export interface Piece {
  start: number;
  end: number;
  tokens: number;
}

/**
 * The model's tokenizer as the loop sees it. `pieces` lets the chunker cut text
 * between tokens without re-encoding: the token count of any run of whole
 * pieces is the sum of their counts.
 */
export interface Tokenizer {
  readonly name: string;
  encode(text: string): number[];
  decode(ids: readonly number[]): string;
  count(text: string): number;
  pieces(text: string): Iterable<Piece>;
}
