/**
 * A MemAgent read planned with a Qwen3 model is refused before the engine is
 * opened (and so before any of the model's files are fetched): Qwen3 models
 * read with InfMem only.
 */
import { describe, expect, it } from 'vitest';
import { ChunkLists } from '../src/core/chunk-lists';
import { ExtractiveEngine } from '../src/engines/extractive/engine';
import { loadQwenTokenizer } from '../src/engines/qwen-tokenizer';
import { EngineCache } from '../src/jobs/engines';
import { RequestError } from '../src/jobs/request-error';
import { planRuns } from '../src/runs/plan';
import { testRunner } from './runner-setup';

describe('planning a MemAgent read on WebLLM', () => {
  it('refuses a Qwen3 model, prebuilt or converted on a Qwen3 library, before opening the engine; a Qwen2.5 model is planned', async () => {
    const tok = await loadQwenTokenizer();
    const { store, library } = await testRunner(new ExtractiveEngine(tok), tok);
    const doc = await library.ingest('book.txt', new TextEncoder().encode('The vault was opened at dawn. '.repeat(200)), 'extractive');
    const opened: unknown[] = [];
    const engines = new EngineCache(async (id, config) => {
      opened.push(config);
      return new ExtractiveEngine(tok);
    });
    const deps = { store, library, engines, lists: new ChunkLists() };
    const request = { documentId: doc.id, engineId: 'webllm', chunkTokens: 1000, memoryTokens: 256 };
    const refused = planRuns(deps, { ...request, engineConfig: { model: 'Qwen3-4B-q4f16_1-MLC' } }, ['Who opened the vault?']);
    await expect(refused).rejects.toThrow(RequestError);
    await expect(refused).rejects.toThrow(/^Qwen3-4B-q4f16_1-MLC is a Qwen3 model, which reads with InfMem only/);
    const converted = {
      model: 'custom:InfMem-4B',
      label: 'InfMem-4B',
      modelUrl: 'https://h.example/I/resolve/main/',
      libUrl: 'https://l.example/Qwen3-4B-q4f16_1_cs1k-webgpu.wasm',
      contextLimit: 32768,
    };
    await expect(planRuns(deps, { ...request, engineConfig: converted }, ['Who opened the vault?'])).rejects.toThrow(/^InfMem-4B is a Qwen3 model/);
    expect(opened).toEqual([]);
    // The same model read the InfMem way is planned: it opens the engine (whose stand-in here has no raw completions).
    const infmem = { ...request, method: { kind: 'infmem' as const, earlyStop: 3, thinking: true }, engineConfig: { model: 'Qwen3-4B-q4f16_1-MLC' } };
    await expect(planRuns(deps, infmem, ['Who opened the vault?'])).rejects.toThrow(/takes chat messages only/);
    expect(opened).toEqual([{ model: 'Qwen3-4B-q4f16_1-MLC' }]);
    opened.length = 0;
    const [run] = await planRuns(deps, { ...request, engineConfig: { model: 'Qwen2.5-0.5B-Instruct-q4f32_1-MLC' } }, ['Who opened the vault?']);
    expect(run?.engineId).toBe('webllm');
    expect(opened).toEqual([{ model: 'Qwen2.5-0.5B-Instruct-q4f32_1-MLC' }]);
  });
});
