import { describe, expect, it } from 'vitest';
import { estimateRun, skimmedChunks } from '../src/core/estimate';

describe('run estimates', () => {
  it('scale the median time per prompt token to the run, counting the answer step', () => {
    const samples = [
      { ms: 1000, promptTokens: 1000 },
      { ms: 3000, promptTokens: 1000 },
      { ms: 2000, promptTokens: 1000 },
    ];
    expect(estimateRun(10, 500, samples)).toEqual({ chunks: 10, msPerChunk: 1000, totalMs: 11_000 });
  });

  it('give no number without measurements', () => {
    expect(estimateRun(10, 500, [])).toBeNull();
    expect(estimateRun(10, 500, [{ ms: 5, promptTokens: 0 }])).toBeNull();
  });

  it('bound the chunks a skim reads by the top share and its neighbours', () => {
    expect(skimmedChunks(100, 0.05, 1)).toBe(15);
    expect(skimmedChunks(10, 0.05, 1)).toBe(3);
    expect(skimmedChunks(4, 0.5, 1)).toBe(4);
  });
});
