import { afterEach, describe, expect, it } from 'vitest';
import type { RevisionRecord } from '../src/storage/schema';
import { i18n } from '../src/ui/i18n';
import { describeRevision } from '../src/ui/inspector/Timeline';
import { describeSpeculation, describeWriting } from '../src/ui/inspector/writing';
import { describeVerdict, mismatchesFor, speculates, withSpeculation } from '../src/ui/engines/webllm/speculation';

/** A stored revision as the runner commits it from a WebLLM step. */
function revision(over: Partial<RevisionRecord> = {}): RevisionRecord {
  return {
    runId: 'r1',
    index: 2,
    start: 0,
    end: 500,
    memoryTokens: 180,
    wordsAdded: 12,
    wordsRemoved: 3,
    ms: 4000,
    promptTokens: 1200,
    completionTokens: 180,
    finishReason: 'stop',
    retries: 0,
    committedAt: 1,
    ...over,
  } as RevisionRecord;
}

const verdict = (v: 'exact' | 'mismatch') => ({ verdict: v, webllm: '0.2.86', library: 'lib.wasm', checkedAt: 1 });

afterEach(() => i18n.changeLanguage('en'));

describe('how a revision was written', () => {
  it('says the passes and the drafted tokens kept, each counted in the right number', () => {
    expect(describeWriting({ passes: 37, drafted: 240, accepted: 143 })).toBe('written in 37 passes (143 of 240 drafted tokens accepted)');
    expect(describeWriting({ passes: 1, drafted: 1, accepted: 0 })).toBe('written in 1 pass (0 of 1 drafted token accepted)');
    expect(describeWriting({ passes: 12, drafted: 0, accepted: 0 })).toBe('written in 12 passes (0 of 0 drafted tokens accepted)');
  });

  it('reads in Simplified Chinese too', async () => {
    await i18n.changeLanguage('zh-CN');
    expect(describeWriting({ passes: 37, drafted: 240, accepted: 143 })).toBe('经 37 轮计算写成（起草的 240 个词元中接受了 143 个）');
  });

  it('is part of a timeline entry only where the revision records it', () => {
    const written = describeRevision(revision({ writing: { passes: 37, drafted: 240, accepted: 143 } }), { total: 10, bookLength: 5000 });
    expect(written).toContain(', written in 37 passes (143 of 240 drafted tokens accepted)');
    expect(describeRevision(revision(), { total: 10, bookLength: 5000 })).not.toContain('written in');
  });
});

describe("the run's speculation setting", () => {
  const webllm = { engineId: 'webllm', engineConfig: { model: 'Qwen2.5-7B-Instruct-q4f16_1-MLC' } };

  it('is said only for WebLLM runs', () => {
    expect(describeSpeculation({ engineId: 'openai', engineConfig: { speculate: false } })).toBeUndefined();
    expect(describeSpeculation({ engineId: 'extractive' }, [revision()])).toBeUndefined();
  });

  it('is off where the run stored speculate: false, whatever its revisions', () => {
    expect(describeSpeculation({ ...webllm, engineConfig: { ...webllm.engineConfig, speculate: false } }, [revision()])).toBe(
      'off: WebLLM’s own decoding, one token per pass',
    );
  });

  it('is on otherwise, with how many revisions were written speculatively once there are some', () => {
    expect(describeSpeculation(webllm)).toBe('on');
    expect(describeSpeculation(webllm, [])).toBe('on');
    const spec = revision({ writing: { passes: 3, drafted: 8, accepted: 5 } });
    expect(describeSpeculation(webllm, [spec, revision(), spec])).toBe('on: 2 of 3 revisions written speculatively');
    expect(describeSpeculation(webllm, [spec])).toBe('on: 1 of 1 revision written speculatively');
    expect(describeSpeculation(webllm, [revision(), revision()])).toMatch(/^on, but no revision was written speculatively/);
  });
});

describe('the "Speculative writing" choice in the engine config', () => {
  const model = { model: 'Qwen2.5-0.5B-Instruct-q4f32_1-MLC' };

  it('turned off stores speculate: false beside the model; turned on leaves the key out, as the engine default', () => {
    expect(withSpeculation(model, false)).toEqual({ ...model, speculate: false });
    expect(withSpeculation({ ...model, speculate: false }, true)).toEqual(model);
    expect(withSpeculation(model, true)).toEqual(model);
  });

  it('reads as on unless the config says speculate: false', () => {
    expect(speculates(undefined)).toBe(true);
    expect(speculates(model)).toBe(true);
    expect(speculates({ ...model, speculate: true })).toBe(true);
    expect(speculates({ ...model, speculate: false })).toBe(false);
  });
});

describe("a model's speculation check", () => {
  it('is said as exact, or as a mismatch that keeps speculation off', async () => {
    expect(describeVerdict(verdict('exact'))).toBe('Speculative writing checked on this GPU: exact');
    expect(describeVerdict({ ...verdict('exact'), compared: 'greedy: 48 tokens' })).toBe('Speculative writing checked on this GPU: exact (greedy: 48 tokens)');
    expect(describeVerdict(verdict('mismatch'))).toBe(
      'Speculative writing checked on this GPU: it wrote other tokens than plain decoding, so speculation is off for this model.',
    );
    await i18n.changeLanguage('zh-CN');
    expect(describeVerdict(verdict('exact'))).toBe('已在此 GPU 上核对推测式写入：完全一致');
  });

  it("counts against a run only where it found a mismatch with the run's own model", () => {
    const recorded = [
      { modelId: 'A', adapter: 'gpu 1', speculation: verdict('mismatch') },
      { modelId: 'A', adapter: 'gpu 2', speculation: verdict('exact') },
      { modelId: 'B', adapter: 'gpu 1', speculation: verdict('mismatch') },
    ];
    expect(mismatchesFor(recorded, { model: 'A' })).toEqual([recorded[0]]);
    expect(mismatchesFor(recorded, { model: 'C' })).toEqual([]);
  });
});
