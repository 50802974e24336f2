import { describe, expect, it, vi } from 'vitest';
import type { GenerateResult } from '../src/core/generation';
import type { Tokenizer } from '../src/core/tokenizer';
import { ContextWindowExceededError } from '../src/engines/errors';
import { WebLLMEngine } from '../src/engines/webllm/engine';
import type { GpuSession, SessionRequest } from '../src/engines/webllm/gpu-session';
import type { ModelEntry } from '../src/engines/webllm/models/models';

const tokenizer = { count: (text: string) => text.split(' ').length } as Tokenizer;
const MODEL = {
  id: 'Qwen2.5-0.5B-Instruct-q4f32_1-MLC',
  label: 'Qwen',
  modelUrl: 'https://h.example/Qwen/resolve/main/',
  libUrl: 'https://l.example/Qwen2-0.5B-Instruct-q4f32_1-ctx4k_cs1k-webgpu.wasm',
  custom: false,
} as ModelEntry;

/** A session that writes each batch's replies as "reply to <message>", and says whether the loaded library can batch. */
function session(blocker?: string) {
  const batches: { window: number; requests: readonly SessionRequest[] }[] = [];
  const gpu = {
    ensure: async () => undefined,
    batchBlocker: () => blocker,
    writeBatch: async (_m: ModelEntry, window: number, requests: readonly SessionRequest[]) => {
      batches.push({ window, requests });
      const results = requests.map((r): PromiseSettledResult<GenerateResult> => ({
        status: 'fulfilled',
        value: { text: `reply to ${r.messages[0]!.content}`, finishReason: 'stop', usage: { promptTokens: 0, completionTokens: 0 } },
      }));
      return { results, tokens: requests.map(() => [1]), passes: { prefill: 1, write: 1 }, batched: true };
    },
  } as unknown as GpuSession;
  return { gpu, batches };
}

const engine = (gpu: GpuSession) =>
  new WebLLMEngine({
    tokenizer,
    model: MODEL,
    limit: 20_000,
    overhead: 40,
    gpu,
    batchShape: { layers: 24, kvBytesPerToken: 24 * 1024, maxBufferSize: 256 * 1024 ** 2 },
  });
const ask = (content: string, maxTokens = 100, signal?: AbortSignal) => ({
  messages: [{ role: 'user' as const, content }],
  options: { maxTokens, temperature: 0, ...(signal && { signal }) },
});

describe('the WebLLM engine’s batches', () => {
  it('sends a step’s requests to the GPU in one batch, in a window for the longest, each settled on its own', async () => {
    const { gpu, batches } = session();
    const stopped = new AbortController();
    stopped.abort();
    const out = await engine(gpu).generateBatch([ask('a b c'), ask('x '.repeat(30_000)), ask('d e', 9000), ask('f', 10, stopped.signal)]);
    expect(out.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled', 'rejected']);
    expect((out[1] as PromiseRejectedResult).reason).toBeInstanceOf(ContextWindowExceededError);
    expect((out[3] as PromiseRejectedResult).reason).toMatchObject({ name: 'AbortError' });
    expect(batches).toHaveLength(1);
    expect(batches[0]!.requests.map((r) => r.messages[0]!.content)).toEqual(['a b c', 'd e']);
    expect(batches[0]!.window).toBe(9216); // 9,002 tokens and the template's 40, in steps of 1,024
    // The app's counts stand in where the batch reported none.
    expect((out[0] as PromiseFulfilledResult<GenerateResult>).value.usage).toEqual({ promptTokens: 3, completionTokens: 5 });
  });

  it('fails every request it sent where the GPU session fails the batch as a whole', async () => {
    const { gpu } = session();
    (gpu as unknown as { writeBatch: () => Promise<never> }).writeBatch = async () => {
      throw new Error('load failed');
    };
    const out = await engine(gpu).generateBatch([ask('a'), ask('b')]);
    expect(out.map((r) => (r.status === 'rejected' ? String(r.reason) : 'ok'))).toEqual(['Error: load failed', 'Error: load failed']);
  });

  it('writes later batches in groups the size a cache could be allocated for, and says so in the console and its batch size', async () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    const { gpu, batches } = session();
    const write = gpu.writeBatch.bind(gpu);
    // The session could not allocate a cache for more than two requests: it wrote them in halves and says so.
    (gpu as { writeBatch: GpuSession['writeBatch'] }).writeBatch = async (model, window, requests) => {
      const batch = await write(model, window, requests);
      return requests.length > 2 ? { ...batch, split: { asked: requests.length, size: 2, error: new Error('Out of memory') } } : batch;
    };
    const e = engine(gpu);
    const first = await e.generateBatch([ask('a'), ask('b'), ask('c')]);
    expect(first.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled']);
    expect(warn).toHaveBeenCalledWith(
      'A KV cache for 3 questions could not be allocated on this GPU, so at most 2 are written in one batch. The allocation failed with:',
      expect.objectContaining({ message: 'Out of memory' }),
    );
    const next = await e.generateBatch([ask('d'), ask('e'), ask('f')]);
    expect(batches.map((b) => b.requests.length)).toEqual([3, 2, 1]);
    expect(next.map((r) => (r.status === 'fulfilled' ? r.value.text : ''))).toEqual(['reply to d', 'reply to e', 'reply to f']);
    expect(await e.batchLimit(9175)).toEqual({
      size: 2,
      reason: 'A KV cache for 3 questions could not be allocated on this GPU, so at most 2 are written in one batch.',
    });
    expect(warn).toHaveBeenCalledTimes(1);
    warn.mockRestore();
  });

  it('says how many questions of a step fit, from the model’s KV size and the device, or that they take turns', async () => {
    // 216 MiB a question, in the 1 GiB budget less WebLLM's own cache of the 9,216-token window it loads (216 MiB).
    expect(await engine(session().gpu).batchLimit(9175)).toEqual({
      size: 3,
      reason: "3 questions of 9,215 tokens fit the 1.0 GiB KV budget of this GPU, less 216 MiB for WebLLM's own cache (24 KiB a token).",
    });
    // The adapter's limit, read when asked: 9 MiB of each layer's pages per sequence do not fit twice in 16 MiB.
    const small = new WebLLMEngine({
      tokenizer,
      model: MODEL,
      limit: 20_000,
      overhead: 40,
      gpu: session().gpu,
      batchShape: { layers: 24, kvBytesPerToken: 24 * 1024 },
      adapterLimits: async () => ({ maxBufferSize: 16 * 1024 ** 2 }),
    });
    expect(await small.batchLimit(9175)).toEqual({
      size: 1,
      reason: "One question of 9,215 tokens fits this GPU's largest buffer (16 MiB for each layer's keys and values).",
    });
    expect(await engine(session('the model library has no batch_prefill and batch_decode').gpu).batchLimit(9175)).toMatchObject({
      size: 1,
      reason: 'Questions are written in turns: the model library has no batch_prefill and batch_decode.',
    });
  });
});
