import { describe, expect, it } from 'vitest';
import { DraftLength, MAX_DRAFT } from '../src/core/draft-length';
import type { GenerateResult } from '../src/core/generation';
import type { GpuSession } from '../src/engines/webllm/gpu-session';
import type { ModelEntry } from '../src/engines/webllm/models/models';
import { describeSpeculation, describeSuite, measureSpeculation, planFor, type SpeculationRecord, type WritingFigure } from '../bench/gpu/speculate';

const PLAIN = [5, 6, 7, 8, 9, 10, 11, 12, 13, 14];

describe('the GPU bench’s draft length', () => {
  it('is chosen per pass for ngram without --draft, and fixed with it', () => {
    const adaptive = planFor({ kind: 'ngram' }, PLAIN, undefined);
    expect(adaptive.tuner).toBeInstanceOf(DraftLength);
    expect(adaptive.maxDraft).toBe(MAX_DRAFT);
    const fixed = planFor({ kind: 'ngram' }, PLAIN, 5);
    expect(fixed.tuner).toBeUndefined();
    expect(fixed.maxDraft).toBe(5);
  });

  it('is chosen per pass for the oracle and partly right drafts too, unless --draft fixes it', () => {
    const oracle = planFor({ kind: 'oracle' }, PLAIN, undefined);
    expect(oracle.tuner).toBeInstanceOf(DraftLength);
    expect(oracle.maxDraft).toBe(MAX_DRAFT);
    expect(oracle.draft!([5, 6])).toEqual(PLAIN.slice(2));
    const partial = planFor({ kind: 'partial', share: 0.5 }, PLAIN, 3);
    expect(partial.tuner).toBeUndefined();
    expect(partial.maxDraft).toBe(3);
    expect(partial.draft!([]).slice(0, 3)).toEqual([6, 6, 8]); // every other one made wrong
  });

  it('says which K each mode drafted with', () => {
    const figure: WritingFigure = {
      written: 10,
      passes: 4,
      drafted: 12,
      accepted: 6,
      passesPerToken: 0.5,
      acceptedPerPass: 1.5,
      draftedPerPass: 3,
      seconds: 1,
      finishReason: 'length',
    };
    const tuner = new DraftLength();
    tuner.observePass({ drafted: 4, accepted: 4, seconds: 0.125 });
    const record: SpeculationRecord = {
      maxTokens: 10,
      sampling: { temperature: 0.7, topP: 0.95, seed: 7 },
      context: 100,
      plain: figure,
      plainTokens: PLAIN,
      modes: [
        { mode: 'ngram', draft: { adaptive: { ...tuner.estimate(), cap: MAX_DRAFT, next: tuner.next() } }, ...figure, speculativeTokens: PLAIN, same: true },
        { mode: 'oracle', draft: { fixed: 8 }, ...figure, speculativeTokens: PLAIN, same: true },
      ],
      verifyCost: [],
    };
    const lines = describeSpeculation(record).join('\n');
    expect(lines).toContain('temperature 0.7, top-p 0.95, seed 7, up to 10 written, K per mode');
    expect(lines).toContain('3 per pass');
    expect(lines).toMatch(
      /K adaptive from 0 to 32 \(at the end: 100 % of drafted positions kept, [\d.]+ tokens a pass at K = 8, pass [\d.]+ ms \+ [\d.]+ ms a drafted token, plain step [\d.]+ ms, next K \d+\)/,
    );
    expect(lines).toContain('K = 8');
  });

  it('prints the suite as one table: step seconds, decode tokens/s, passes per token and the ratio to the plain step', () => {
    const figure = (seconds: number, passesPerToken: number, decodeTokensPerSecond: number): WritingFigure => ({
      written: 10,
      passes: 9,
      drafted: 0,
      accepted: 0,
      passesPerToken,
      acceptedPerPass: 0,
      draftedPerPass: 0,
      decodeTokensPerSecond,
      seconds,
      finishReason: 'length',
    });
    const lines = describeSuite({
      maxTokens: 10,
      sampling: { temperature: 0, topP: 0.95, seed: 1 },
      context: 100,
      plain: figure(150, 1, 8),
      plainTokens: PLAIN,
      modes: [{ mode: 'oracle', draft: { fixed: 8 }, ...figure(60, 0.3, 20), speculativeTokens: PLAIN, same: true }],
      verifyCost: [],
    });
    expect(lines[0]).toMatch(/suite\s+step s\s+decode t\/s\s+passes\/tok\s+× plain/);
    expect(lines[1]).toMatch(/plain\s+150\.00\s+8\.00\s+1\.000\s+1\.00$/);
    expect(lines[2]).toMatch(/oracle\s+60\.00\s+20\.00\s+0\.300\s+0\.40$/);
  });
});

describe('the GPU bench’s speculation measurement', () => {
  const result = (written: number): GenerateResult => ({ text: 'x', finishReason: 'length', usage: { promptTokens: 20, completionTokens: written } });
  /** A session that writes PLAIN for every request and records whether each was plain or speculative. */
  function session(writes: string[]) {
    return {
      write: async (_m: unknown, _w: number, request: { speculation?: unknown }) => {
        writes.push(request.speculation ? 'speculative' : 'plain');
        return { result: result(PLAIN.length), tokens: [...PLAIN] };
      },
      withPipeline: async <T>(_m: unknown, _w: number, use: (p: unknown) => Promise<T>) => use({ filledKVCacheLength: 29 }),
    } as unknown as GpuSession;
  }
  const bench = (writes: string[]) => ({ session: session(writes), model: {} as ModelEntry, window: 64, log: () => undefined });
  const step = { messages: [{ role: 'user' as const, content: 'q' }], maxTokens: PLAIN.length, modes: [{ kind: 'oracle' as const }], verifyKs: [] };

  it('writes the plain reply itself where none is given, then each mode', async () => {
    const writes: string[] = [];
    const record = await measureSpeculation(bench(writes), step);
    expect(writes).toEqual(['plain', 'speculative']);
    expect(record.plainTokens).toEqual(PLAIN);
    expect(record.context).toBe(29);
  });

  it('takes the suite’s step as the plain reply and does not write it again', async () => {
    const writes: string[] = [];
    const record = await measureSpeculation(bench(writes), { ...step, plain: { tokens: PLAIN, result: result(PLAIN.length), seconds: 12.5 } });
    expect(writes).toEqual(['speculative']);
    expect(record.plain).toMatchObject({ written: PLAIN.length, seconds: 12.5 });
    expect(record.modes[0]).toMatchObject({ mode: 'oracle', same: true });
  });
});
