import { describe, expect, it } from 'vitest';
import { NaNLogitsError, RuntimeProbe } from '../bench/gpu/probe';
import type { Mlc, StreamChunk } from '../src/engines/webllm/driver/mlc';
import { WEBLLM_0_2_79, WEBLLM_0_2_86 } from '../src/engines/webllm/versions';

/** A stand-in for WebLLM's chat pipeline: one prefill, then decode steps that take the times given (ms, on a fake clock). */
function pipeline(decodeMs: number[], clock: { now: number }, sampler = async () => 1) {
  let i = 0;
  const p: Record<string, unknown> = {
    filledKVCacheLength: 0,
    prefillStep: async () => {
      clock.now += 500;
      await (p.sampleTokenFromLogits as () => Promise<number>)();
    },
    decodeStep: async () => {
      clock.now += decodeMs[i++]!;
      await (p.sampleTokenFromLogits as () => Promise<number>)();
    },
    sampleTokenFromLogits: sampler,
  };
  return p;
}

describe('where a request’s time goes (the GPU benchmark’s probe)', () => {
  it('times the prefill and every decode step, and averages the first and last ones', async () => {
    const clock = { now: 0 };
    const realNow = performance.now.bind(performance);
    performance.now = () => clock.now;
    try {
      const probe = new RuntimeProbe(WEBLLM_0_2_79);
      const p = pipeline([10, 10, 12, 12, 30, 30, 40, 40, 50, 50, 60, 60, 70, 70, 80, 80, 90, 90], clock);
      probe.instrument(p);
      probe.begin();
      await (p.prefillStep as () => Promise<void>)();
      for (let i = 0; i < 18; i++) await (p.decodeStep as () => Promise<void>)();
      const t = await probe.end();
      expect(t).toMatchObject({
        firstTokenMs: 500,
        decodeSteps: 18,
        decodeStartMs: (10 + 10 + 12 + 12 + 30 + 30 + 40 + 40) / 8,
        decodeEndMs: (60 + 60 + 70 + 70 + 80 + 80 + 90 + 90) / 8,
      });
      expect(t.breakdown).toEqual({ offered: false, note: 'WebLLM 0.2.79 offers no latency breakdown (0.2.86 does)' });
    } finally {
      performance.now = realNow;
    }
  });

  it('asks WebLLM 0.2.86 for its latency breakdown and sums it per token', async () => {
    const probe = new RuntimeProbe(WEBLLM_0_2_86);
    const requests: Record<string, unknown>[] = [];
    const usage = {
      prompt_tokens: 10,
      completion_tokens: 2,
      extra: { latencyBreakdown: { totalTime: [0.05, 0.03], sampleTime: [0.01, 0.002], penaltyTime: [0, 0], grammarBitmaskTime: [] } },
    };
    const fake: Mlc = {
      reload: async () => undefined,
      unload: async () => undefined,
      interruptGenerate: () => undefined,
      chat: {
        completions: {
          create: async (request) => {
            requests.push(request);
            return (async function* (): AsyncGenerator<StreamChunk> {
              yield { choices: [{ delta: { content: 'a' } }] };
              yield { choices: [], usage } as StreamChunk;
            })();
          },
        },
      },
    };
    const mlc = await probe.factory(async () => fake)({ model_list: [], cacheBackend: 'cache' }, () => undefined);
    probe.begin();
    for await (const chunk of await mlc.chat.completions.create({ messages: [], extra_body: { enable_thinking: false } })) void chunk;
    const t = await probe.end();
    expect(requests[0]).toMatchObject({ extra_body: { enable_thinking: false, enable_latency_breakdown: true } });
    expect(t.breakdown).toEqual({
      offered: true,
      tokens: 2,
      msInAll: { total: 80, sample: 12, penalty: 0, grammarBitmask: 0 },
      msPerToken: { total: 40, sample: 6, penalty: 0, grammarBitmask: 0 },
    });
  });

  it('reports NaN logits as such where the sampler meets them, and lets other sampler errors through unchanged', async () => {
    const probe = new RuntimeProbe(WEBLLM_0_2_79);
    const nan = pipeline([], { now: 0 }, async () => {
      throw new Error('InternalError: Check failed: (uniform_sample <= data[0].first) is false: 0.20222 vs. nan');
    });
    probe.instrument(nan);
    await expect((nan.prefillStep as () => Promise<void>)()).rejects.toThrow(NaNLogitsError);
    await expect((nan.prefillStep as () => Promise<void>)()).rejects.toThrow(/logits were NaN.*0\.20222 vs\. nan.*not overflow/);
    const other = pipeline([], { now: 0 }, async () => {
      throw new Error('device lost');
    });
    probe.instrument(other);
    await expect((other.prefillStep as () => Promise<void>)()).rejects.toThrow(/^device lost$/);
  });
});
