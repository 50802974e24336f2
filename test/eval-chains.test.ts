import { beforeAll, describe, expect, it } from 'vitest';
import { skimTerms } from '../src/core/skim';
import { loadQwenTokenizer, type QwenTokenizer } from '../src/engines/qwen-tokenizer';
import { makeChain } from '../src/eval/chains';
import { Haystack } from '../src/eval/haystack';
import { Rng } from '../src/eval/rng';
import { generateSample } from '../src/eval/tasks';
import { corpusText } from './helpers';

let tok: QwenTokenizer;
let essay: Haystack;
beforeAll(async () => {
  tok = await loadQwenTokenizer();
  essay = Haystack.fromText('frankenstein.txt', corpusText('frankenstein.txt'));
}, 60_000); // loading the tokenizer takes seconds on a busy machine

const shared = (a: string, b: string) => skimTerms(a).filter((t) => skimTerms(b).includes(t));

describe('chains of planted facts', () => {
  it('each fact names only the next, and only the first shares words with the question', () => {
    for (const seed of [1, 2, 3, 4, 5]) {
      for (const length of [2, 3]) {
        const chain = makeChain(new Rng(seed), length);
        expect(chain.hops).toHaveLength(length);
        expect(shared(chain.hops[0]!, chain.question).length).toBeGreaterThan(0);
        for (const hop of chain.hops.slice(1)) expect(shared(hop, chain.question)).toEqual([]);
        // Consecutive facts share a name; facts further apart share nothing.
        for (let k = 0; k + 1 < length; k++) expect(shared(chain.hops[k]!, chain.hops[k + 1]!).length).toBeGreaterThan(0);
        if (length === 3) expect(shared(chain.hops[0]!, chain.hops[2]!)).toEqual([]);
        expect(chain.hops[length - 1]).toContain(chain.answer);
        for (const hop of chain.hops.slice(0, -1)) expect(hop).not.toContain(chain.answer);
      }
    }
  });

  it('plants the facts in reading order, or the last first when reversed', () => {
    for (const [task, forward] of [
      ['chain_3', true],
      ['chain_3_reversed', false],
    ] as const) {
      const sample = generateSample(task, { seed: 7, tokens: 16 * 1024, tokenizer: tok, essay });
      const chain = makeChain(new Rng(7), 3); // the sample's first draws are its chain
      const order = forward ? chain.hops : [...chain.hops].reverse();
      expect(sample.placements.map((p) => p.text)).toEqual(order);
      for (const p of sample.placements) expect(sample.document.slice(p.start, p.end)).toBe(p.text);
      expect(sample.question).toBe(chain.question);
      expect(sample.references).toEqual([chain.answer]);
    }
  });
});
