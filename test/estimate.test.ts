import { describe, expect, it } from 'vitest';
import { besideMs, besideSteps, estimateRead, estimateRun, modelKey, PROMPT_OVERHEAD_TOKENS, readSize, skimmedChunks, stepMs } from '../src/core/estimate';

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

describe('what a read takes besides its steps', () => {
  /** A read of steps of `ms` each, started at 0: `start` before the first step, `store` after each, `end` after the last. */
  const read = (chunks: number, ms: number, start: number, store: number, end: number) => {
    const steps = Array.from({ length: chunks }, (_, i) => ({ ms, committedAt: start + (i + 1) * ms + i * store }));
    return { startedAt: 0, finishedAt: steps.at(-1)!.committedAt + end, steps };
  };

  it('measures the start (engine, tokenizer, the book cut), each revision stored, and the end less the answer step', () => {
    // The model-free engine: steps of 5 ms, and 2.5 s to start a first read: 22 chunks take about 3 s, not less than a second.
    const beside = besideSteps([read(22, 5, 2500, 20, 300)])!;
    expect(beside).toEqual({ startMs: 2500, perChunkMs: 20, endMs: 295 });
    expect(besideMs(beside, 22)).toBe(2500 + 22 * 20 + 295);
  });

  it('takes the median read, so that one paused read does not count its pause', () => {
    const paused = read(10, 5, 60_000, 20, 300);
    expect(besideSteps([read(10, 5, 1000, 20, 300), paused, read(10, 5, 1200, 20, 300)])!.startMs).toBe(1200);
  });

  it('has no figure before a read has finished', () => {
    expect(besideSteps([])).toBeUndefined();
    expect(besideSteps([{ startedAt: 0, finishedAt: 10, steps: [] }])).toBeUndefined();
  });
});

describe('estimates from reading and writing speeds', () => {
  const speed = { prefillTokensPerSecond: 2000, decodeTokensPerSecond: 40 };

  it('count each step as its prompt at the prefill speed plus what it writes at the decode speed', () => {
    // 6,000 tokens at 2,000/s is 3 s; 1,024 tokens at 40/s is 25.6 s.
    expect(stepMs(6000, 1024, speed)).toBeCloseTo(28_600);
  });

  it('take a calibration, with a full memory written at each step, while no step is measured', () => {
    const e = estimateRead({ chunks: 10, promptTokens: 6000, memoryTokens: 1024, steps: [], speed })!;
    expect(e.source).toBe('speed');
    expect(e.writtenTokens).toBe(1024);
    expect(e.msPerChunk).toBeCloseTo(28_600);
    // One more step writes the answer.
    expect(e.totalMs).toBeCloseTo(28_600 * 11);
  });

  it('prefer past steps of the model: their median speeds and the median they wrote', () => {
    const steps = [
      { ms: 9000, promptTokens: 6000, completionTokens: 200, prefillTokensPerSecond: 1000, decodeTokensPerSecond: 20 },
      { ms: 9000, promptTokens: 6000, completionTokens: 300, prefillTokensPerSecond: 3000, decodeTokensPerSecond: 30 },
      { ms: 9000, promptTokens: 6000, completionTokens: 400, prefillTokensPerSecond: 1500, decodeTokensPerSecond: 25 },
    ];
    const e = estimateRead({ chunks: 4, promptTokens: 6000, memoryTokens: 1024, steps, speed })!;
    expect(e.source).toBe('steps');
    expect(e.speed).toEqual({ prefillTokensPerSecond: 1500, decodeTokensPerSecond: 25 });
    expect(e.writtenTokens).toBe(300);
    expect(e.msPerChunk).toBeCloseTo(1000 * (6000 / 1500 + 300 / 25));
  });

  it('never expect a step to write more than the memory size now set', () => {
    const steps = [{ ms: 1000, promptTokens: 1000, completionTokens: 900, prefillTokensPerSecond: 1000, decodeTokensPerSecond: 10 }];
    expect(estimateRead({ chunks: 1, promptTokens: 1000, memoryTokens: 256, steps })!.writtenTokens).toBe(256);
  });

  it('fall back to the time per prompt token for steps of engines that report no speeds', () => {
    const steps = [{ ms: 2000, promptTokens: 1000, completionTokens: 100 }];
    expect(estimateRead({ chunks: 10, promptTokens: 500, memoryTokens: 1024, steps, speed })).toMatchObject({
      source: 'steps',
      msPerChunk: 1000,
      totalMs: 11_000,
    });
  });

  it('give no number with neither steps nor a usable speed', () => {
    expect(estimateRead({ chunks: 10, promptTokens: 500, memoryTokens: 1024, steps: [] })).toBeNull();
    expect(
      estimateRead({ chunks: 10, promptTokens: 500, memoryTokens: 1024, steps: [], speed: { prefillTokensPerSecond: 0, decodeTokensPerSecond: 40 } }),
    ).toBeNull();
  });
});

describe('the model an engine config names', () => {
  it('tells models, files and servers apart, and is empty for engines without a model', () => {
    expect(modelKey({ model: 'Qwen2.5-7B-Instruct-q4f16_1-MLC' })).toBe('Qwen2.5-7B-Instruct-q4f16_1-MLC');
    expect(modelKey({ modelUrl: 'https://hf.example/a.gguf', threads: 4 })).toBe('https://hf.example/a.gguf');
    expect(modelKey({ localModel: 'a-123-456', modelUrl: 'https://hf.example/a.gguf' })).toBe('a-123-456');
    expect(modelKey({ baseUrl: 'http://127.0.0.1:8000/v1', model: 'qwen' })).not.toBe(modelKey({ baseUrl: 'http://127.0.0.1:9000/v1', model: 'qwen' }));
    expect(modelKey(undefined)).toBe('');
    expect(modelKey({})).toBe('');
  });

  it('is the same for every engine config of one model: the WebLLM custom model is known by its id, a llama.cpp model whatever its threads', () => {
    const custom = { model: 'custom:RL-MemAgent-7B', label: 'RL-MemAgent-7B', modelUrl: 'https://hf.example/rl/', libUrl: 'https://hf.example/lib.wasm' };
    expect(modelKey(custom)).toBe('custom:RL-MemAgent-7B');
    expect(modelKey({ modelUrl: ' https://hf.example/a.gguf', threads: 1, contextTokens: 8192 })).toBe(
      modelKey({ modelUrl: 'https://hf.example/a.gguf', threads: 4 }),
    );
    expect(modelKey({ localModel: 'a-123-456', localModelName: 'a.gguf' })).toBe('a-123-456');
  });
});

describe('the size of a read', () => {
  it('counts chunks, and per step its chunk, the memory and the prompt around them', () => {
    // Cuts fall a little short of the size, at a paragraph or sentence end: twice a chunk's tokens take three.
    expect(readSize(10_000, 5000, 1000)).toEqual({ chunks: 3, promptTokens: 5000 + 1000 + PROMPT_OVERHEAD_TOKENS });
    expect(readSize(9_000, 5000, 1000)).toEqual({ chunks: 2, promptTokens: 5000 + 1000 + PROMPT_OVERHEAD_TOKENS });
    // A book shorter than a chunk is one chunk of its own length.
    expect(readSize(300, 5000, 100)).toEqual({ chunks: 1, promptTokens: 300 + 100 + PROMPT_OVERHEAD_TOKENS });
    // A set of books: each is cut on its own, so each ends in a chunk of its own.
    expect(readSize([9_000, 300, 4_000], 5000, 1000)).toEqual({ chunks: 4, promptTokens: 5000 + 1000 + PROMPT_OVERHEAD_TOKENS });
    expect(readSize([300, 200], 5000, 100)).toEqual({ chunks: 2, promptTokens: 300 + 100 + PROMPT_OVERHEAD_TOKENS });
  });

  it('with a measured speed alone, counts each step and the answer as writing a full memory: an upper bound', () => {
    const speed = { prefillTokensPerSecond: 100, decodeTokensPerSecond: 10 };
    const { chunks, promptTokens } = readSize(9_000, 5000, 1000);
    const estimate = estimateRead({ chunks, promptTokens, memoryTokens: 1000, steps: [], speed })!;
    // Three steps (two chunks and the answer) of (6250 / 100 + 1000 / 10) s.
    expect(estimate.totalMs).toBe(3 * (62.5 + 100) * 1000);
    expect(estimate).toMatchObject({ source: 'speed', writtenTokens: 1000 });
  });
});
