/**
 * BM25Okapi as rank_bm25 0.2.2 computes it (k1 1.5, b 0.75, epsilon 0.25),
 * operation for operation in float64 so that scores agree with it: the IDF
 * floor only for words with a negative IDF, the average IDF summed in the
 * order words first appear, each query token (repeats included) added in turn.
 */
export class Bm25Okapi {
  readonly k1 = 1.5;
  readonly b = 0.75;
  readonly epsilon = 0.25;
  private readonly docFreqs: Map<string, number>[] = [];
  private readonly docLen: number[] = [];
  /** Keyed by a Map, never an object: an object would move integer-like words ("1889") first. */
  private readonly idf = new Map<string, number>();
  readonly avgdl: number;
  readonly averageIdf: number;

  constructor(corpus: readonly (readonly string[])[]) {
    const nd = new Map<string, number>();
    let numDoc = 0;
    for (const document of corpus) {
      this.docLen.push(document.length);
      numDoc += document.length;
      const frequencies = new Map<string, number>();
      for (const word of document) frequencies.set(word, (frequencies.get(word) ?? 0) + 1);
      this.docFreqs.push(frequencies);
      for (const word of frequencies.keys()) nd.set(word, (nd.get(word) ?? 0) + 1);
    }
    const size = corpus.length;
    this.avgdl = numDoc / size;
    let idfSum = 0;
    const negative: string[] = [];
    for (const [word, freq] of nd) {
      const idf = Math.log(size - freq + 0.5) - Math.log(freq + 0.5);
      this.idf.set(word, idf);
      idfSum += idf;
      if (idf < 0) negative.push(word);
    }
    this.averageIdf = idfSum / this.idf.size;
    const eps = this.epsilon * this.averageIdf;
    for (const word of negative) this.idf.set(word, eps);
  }

  /** The IDF a word is scored with (0 for a word no unit holds). */
  idfOf(word: string): number {
    return this.idf.get(word) ?? 0;
  }

  /** `get_scores(query)`: one score per unit. */
  scores(query: readonly string[]): number[] {
    const score = new Array<number>(this.docLen.length).fill(0);
    const { k1, b } = this;
    for (const q of query) {
      const idf = this.idf.get(q) ?? 0;
      for (let d = 0; d < score.length; d++) {
        const f = this.docFreqs[d]!.get(q) ?? 0;
        score[d]! += idf * ((f * (k1 + 1)) / (f + k1 * (1 - b + (b * this.docLen[d]!) / this.avgdl)));
      }
    }
    return score;
  }
}
