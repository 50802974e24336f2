import { describe, expect, it } from 'vitest';
import type { GenerateOptions } from '../src/core/generation';
import { questionSeed } from '../src/core/plan';
import { replyRandom } from '../src/core/random';
import { samplingDistribution } from '../src/core/speculative';
import { type BatchItem, writeBatch } from '../src/engines/webllm/driver/batch-writer';
import type { BatchKernels, BatchModel, SequenceTokens, SequenceWriter } from '../src/engines/webllm/driver/batch-model';
import { type GenConfig, type Tensor, type VerifyPipeline, withAppSampler } from '../src/engines/webllm/driver/driver';
import { fixedPlan } from '../src/engines/webllm/driver/speculate';
import { WEBLLM_0_2_79, WEBLLM_0_2_86, type WebLLMVersion } from '../src/engines/webllm/versions';

// A seeded question written alone (WebLLM's request loop, its sampling step replaced by the app's) and the same
// question as one sequence of a batch (batch-writer.ts) draw the same numbers with the same rule: the same reply, at
// the paper's sampling, whatever the batch drafts.

const VOCAB = 16;
const STOP = 15;
const SAMPLING = { temperature: 0.7, topP: 0.95 };
const READ_SEED = 7;
const MAX_TOKENS = 8;

/** Stand-in logits: several tokens within reach of the top at temperature 0.7, depending on the whole cache. */
function nextLogits(cache: readonly number[]): Float32Array {
  const row = new Float32Array(VOCAB);
  const h = cache.reduce((n, t, i) => (n * 31 + t * (i + 7)) % 1009, 17);
  for (let t = 0; t < VOCAB; t++) row[t] = ((h * (t + 3)) % 13) / 6;
  row[STOP] = cache.length > 9 ? 3 : -1;
  return row;
}

const tensor = (row: Float32Array): Tensor => ({ toArray: () => row }) as unknown as Tensor;

/** WebLLM's pipeline in small: its sampling step (argmax, never the app's draw) and the copy of logits to the CPU. */
class StandInPipeline {
  outputIds: number[] = [];
  appearedTokensFreq = new Map<number, number>();
  config = { temperature: 1, top_p: 1, repetition_penalty: 1, presence_penalty: 0, frequency_penalty: 0 };
  tvm = { beginScope: () => undefined, endScope: () => undefined };
  device = { sync: async () => undefined };
  ownSamples = 0;
  logitsOnCPU: Tensor | undefined;
  updateLogitsOnCPU(logits: Tensor) {
    return (this.logitsOnCPU = logits);
  }
  async sampleFromRawLogits(logits: Tensor): Promise<number> {
    this.ownSamples++;
    const row = logits.toArray();
    let best = 0;
    for (let t = 1; t < row.length; t++) if (row[t]! > row[best]!) best = t;
    return best;
  }
  async sampleTokenFromLogits(logits: Tensor): Promise<number> {
    return this.sampleFromRawLogits(logits);
  }
}

/** One request alone as WebLLM's loop writes it: a forward, its sampling step, the token taken in; stops at STOP or the cap. */
async function alone(version: WebLLMVersion, prompt: readonly number[], seed: number): Promise<{ tokens: number[]; own: number }> {
  const pipeline = new StandInPipeline();
  const genConfig: GenConfig = { temperature: SAMPLING.temperature, top_p: SAMPLING.topP, max_tokens: MAX_TOKENS };
  const steps = pipeline as unknown as Record<string, (logits: Tensor, config: GenConfig) => Promise<number>>;
  const random = replyRandom(seed, () => pipeline.outputIds.length);
  await withAppSampler(version, pipeline as unknown as VerifyPipeline, random, async () => {
    while (pipeline.outputIds.length < MAX_TOKENS) {
      // Looked up at each step, as WebLLM's loop calls it: the replaced step while `work` runs.
      const token = await steps[version.sampler]!.call(pipeline, tensor(nextLogits([...prompt, ...pipeline.outputIds])), genConfig);
      if (token === STOP) break;
      pipeline.outputIds.push(token);
    }
  });
  expect(Object.hasOwn(pipeline, version.sampler)).toBe(false); // WebLLM's own step is back
  return { tokens: pipeline.outputIds, own: pipeline.ownSamples };
}

/** A request's writing state in small: stops at STOP or the cap, samples at the request's settings. */
function writer(options: GenerateOptions): SequenceWriter {
  const ids: number[] = [];
  let stopped = false;
  return {
    written: () => ids,
    text: () => ids.join(' '),
    stopped: () => stopped,
    finishReason: () => 'stop',
    distribution: (row) => samplingDistribution(row, { temperature: options.temperature!, topP: options.topP! }),
    commit: (token) => {
      if (token === STOP) stopped = true;
      else ids.push(token);
      if (ids.length >= options.maxTokens) stopped = true;
      return !stopped;
    },
  };
}

/** The stand-in model for a batch: a cache per sequence, logits from nextLogits after each token run. */
function batchModel(prompts: readonly number[][], items: readonly BatchItem[]): BatchModel {
  return {
    chunk: 64,
    window: 256,
    prepare: async (i) => ({ prompt: prompts[i]!, writer: writer(items[i]!.options) }),
    open: (capacities): BatchKernels => {
      const caches = capacities.map(() => [] as number[]);
      const run = (parts: readonly SequenceTokens[]) =>
        parts.map((p) =>
          p.tokens.map((t) => {
            caches[p.seq]!.push(t);
            return nextLogits(caches[p.seq]!);
          }),
        );
      return {
        prefill: async (parts) => run(parts).map((rows) => rows.at(-1)!),
        decode: async (parts) => run(parts).map((rows) => rows[0]!),
        verify: async (parts) => run(parts),
        popn: (seq, n) => void caches[seq]!.splice(caches[seq]!.length - n, n),
        remove: () => undefined,
        dispose: () => undefined,
      };
    },
  };
}

const PROMPTS = [
  [1, 2, 3],
  [4, 5],
  [6, 7, 8, 9],
];

describe('a seeded question alone and in a batch', () => {
  it.each([WEBLLM_0_2_79, WEBLLM_0_2_86])(
    'writes the same reply at temperature 0.7 and top-p 0.95 alone (WebLLM $version’s loop, the app’s sampler) and batched, drafted right, wrong or not at all',
    async (version) => {
      const seeds = PROMPTS.map((_, i) => questionSeed(READ_SEED, i));
      const single = await Promise.all(PROMPTS.map((p, i) => alone(version, p, seeds[i]!)));
      expect(single.every((s) => s.own === 0)).toBe(true); // every token was the app's draw
      const replies = single.map((s) => s.tokens);
      const options = (i: number): GenerateOptions => ({ maxTokens: MAX_TOKENS, ...SAMPLING, seed: seeds[i]! });
      const items: BatchItem[] = [
        { options: options(0), plan: fixedPlan(3, (w) => replies[0]!.slice(w.length)) }, // the reply itself
        { options: options(1), plan: fixedPlan(2, () => [0, 0]) }, // mostly wrong
        { options: options(2) },
      ];
      const out = await writeBatch(batchModel(PROMPTS, items), items);
      expect(out.results.every((r) => r.status === 'fulfilled')).toBe(true);
      expect(out.tokens).toEqual(replies);
      // The right draft was kept: fewer writing passes than its reply has tokens.
      const first = out.results[0]!.status === 'fulfilled' ? out.results[0]!.value.usage.writing! : undefined;
      expect(first!.accepted).toBeGreaterThan(0);
      expect(first!.passes).toBeLessThan(replies[0]!.length - 1);
    },
  );

  it('samples: the replies are not the greedy ones, and another read seed gives other replies', async () => {
    const sampled = await Promise.all(PROMPTS.map((p, i) => alone(WEBLLM_0_2_86, p, questionSeed(READ_SEED, i))));
    const greedy = PROMPTS.map((p) => {
      const out: number[] = [];
      while (out.length < MAX_TOKENS) {
        const row = nextLogits([...p, ...out]);
        const t = row.indexOf(Math.max(...row));
        if (t === STOP) break;
        out.push(t);
      }
      return out;
    });
    expect(sampled.map((s) => s.tokens)).not.toEqual(greedy);
    const other = await Promise.all(PROMPTS.map((p, i) => alone(WEBLLM_0_2_86, p, questionSeed(READ_SEED + 1, i))));
    expect(other.map((s) => s.tokens)).not.toEqual(sampled.map((s) => s.tokens));
  });
});
