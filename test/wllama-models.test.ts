import { describe, expect, it } from 'vitest';
import {
  cpuDevice,
  cpuThreads,
  DEFAULT_CONTEXT_TOKENS,
  defaultThreads,
  effectiveThreads,
  guessSpeed,
  isQwenVocabulary,
  localModelKey,
  parseWllamaConfig,
  SUGGESTED_MODELS,
} from '../src/engines/wllama/models';

describe('parseWllamaConfig', () => {
  it('reads a URL, threads and context', () => {
    expect(parseWllamaConfig({ modelUrl: ' https://h/m.gguf ', threads: 3, contextTokens: 4096 })).toEqual({
      source: { kind: 'url', url: 'https://h/m.gguf' },
      threads: 3,
      contextTokens: 4096,
    });
    expect(parseWllamaConfig({ modelUrl: 'https://h/m-00001-of-00002.gguf?download=true' }).contextTokens).toBe(DEFAULT_CONTEXT_TOKENS);
  });

  it('prefers picked files over a URL', () => {
    expect(parseWllamaConfig({ modelUrl: 'https://h/m.gguf', localModel: 'k', localModelName: 'm.gguf' }).source).toEqual({
      kind: 'local',
      key: 'k',
      name: 'm.gguf',
    });
  });

  it('refuses what cannot be a model, saying what to do', () => {
    expect(() => parseWllamaConfig({})).toThrow(/Choose a model/);
    expect(() => parseWllamaConfig({ modelUrl: 'ftp://h/m.gguf' })).toThrow(/http/);
    expect(() => parseWllamaConfig({ modelUrl: 'https://h/model.bin' })).toThrow(/\.gguf/);
    expect(() => parseWllamaConfig({ modelUrl: 'https://h/m.gguf', contextTokens: 100 })).toThrow(/at least 512/);
  });

  it('ignores a thread count that is not a number', () => {
    expect(parseWllamaConfig({ modelUrl: 'https://h/m.gguf', threads: Number.NaN }).threads).toBeUndefined();
  });
});

describe('threads', () => {
  it('uses half the logical cores, between 1 and 8', () => {
    expect(defaultThreads(1)).toBe(1);
    expect(defaultThreads(2)).toBe(1);
    expect(defaultThreads(8)).toBe(4);
    expect(defaultThreads(32)).toBe(8);
    expect(defaultThreads(undefined)).toBe(1);
  });

  it('runs one thread unless the page is cross-origin isolated, and never more than the cores', () => {
    expect(effectiveThreads(6, 8, false)).toBe(1);
    expect(effectiveThreads(6, 8, true)).toBe(6);
    expect(effectiveThreads(16, 8, true)).toBe(8);
    expect(effectiveThreads(undefined, 8, true)).toBe(4);
  });
});

describe('suggested models', () => {
  it('are Qwen2.5 Instruct Q4_K_M GGUFs with sizes, the 7B in parts', () => {
    expect(SUGGESTED_MODELS.map((m) => m.label)).toEqual([
      'Qwen2.5-0.5B-Instruct Q4_K_M',
      'Qwen2.5-1.5B-Instruct Q4_K_M',
      'Qwen2.5-3B-Instruct Q4_K_M',
      'Qwen2.5-7B-Instruct Q4_K_M',
    ]);
    for (const m of SUGGESTED_MODELS) {
      expect(() => parseWllamaConfig({ modelUrl: m.url })).not.toThrow();
      expect(m.bytes).toBeGreaterThan(100e6);
      if (m.parts > 1) expect(m.url).toMatch(new RegExp(`-00001-of-0000${m.parts}\\.gguf$`));
    }
  });
});

describe('localModelKey', () => {
  const file = (name: string, size: number, lastModified = 1000) => ({ name, size, lastModified });

  it('is the same for the same files in any order, and differs when they change', () => {
    const a = localModelKey([file('m-00001-of-00002.gguf', 10), file('m-00002-of-00002.gguf', 5)]);
    expect(localModelKey([file('m-00002-of-00002.gguf', 5), file('m-00001-of-00002.gguf', 10)])).toBe(a);
    expect(localModelKey([file('m-00001-of-00002.gguf', 10), file('m-00002-of-00002.gguf', 6)])).not.toBe(a);
    expect(localModelKey([file('m-00001-of-00002.gguf', 10, 2000), file('m-00002-of-00002.gguf', 5)])).not.toBe(a);
  });

  it('is a safe file name', () => {
    expect(localModelKey([file('../../my model?.gguf', 7)])).toMatch(/^[A-Za-z0-9._-]+$/);
  });
});

describe('speed', () => {
  it('guesses from the model size and threads', () => {
    expect(guessSpeed(0.5e9, 1)).toEqual({ decodeTokensPerSecond: 16, prefillTokensPerSecond: 128 });
    expect(guessSpeed(0.5e9, 4).decodeTokensPerSecond).toBe(64);
    expect(guessSpeed(0.5e9, 16).decodeTokensPerSecond).toBe(64); // memory bandwidth, not cores, limits it
    expect(guessSpeed(4.68e9, 4).decodeTokensPerSecond).toBeLessThan(8);
  });

  it('keeps speeds measured with different thread counts apart, and apart from any GPU', () => {
    expect(cpuDevice(1)).toBe('cpu, 1 thread');
    expect(cpuDevice(4)).not.toBe(cpuDevice(2));
    expect(cpuThreads(cpuDevice(4))).toBe(4);
    expect(cpuThreads('nvidia ampere')).toBeUndefined();
  });
});

describe('isQwenVocabulary', () => {
  it("knows Qwen2's vocabulary and no other", () => {
    expect(isQwenVocabulary({ n_vocab: 151936, metadata: { 'general.architecture': 'qwen2', 'tokenizer.ggml.pre': 'qwen2' } })).toBe(true);
    expect(isQwenVocabulary({ n_vocab: 151936, metadata: { 'general.architecture': 'qwen3', 'tokenizer.ggml.pre': 'qwen2' } })).toBe(true);
    expect(isQwenVocabulary({ n_vocab: 32000, metadata: { 'general.architecture': 'llama' } })).toBe(false);
    expect(isQwenVocabulary({ n_vocab: 128256, metadata: { 'general.architecture': 'qwen2' } })).toBe(false);
  });
});
