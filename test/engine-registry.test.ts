import { describe, expect, it } from 'vitest';
import type { EngineInfo } from '../src/engines/engine';
import { ENGINES, importTokenizerEngine, needsModel } from '../src/engines/infos';
import { ENTRIES } from '../src/engines/registry';

describe('engine registry', () => {
  it('opens exactly the engines the page lists, in the same order, with the same infos', () => {
    expect(ENTRIES.map((e) => e.info)).toEqual(ENGINES);
  });

  it('says once which engines read without a model', () => {
    expect(ENGINES.filter((e) => !e.needsModel).map((e) => e.id)).toEqual(['extractive']);
    expect(needsModel('extractive')).toBe(false);
    expect(needsModel('openai')).toBe(true);
    expect(needsModel('an-engine-from-elsewhere')).toBe(true);
  });

  it('counts an imported book with a tokenizer that needs no model, whatever order the engines are listed in', () => {
    const byId = (id: string) => ENGINES.find((e) => e.id === id)!;
    const gpuFirst: EngineInfo[] = [byId('webllm'), byId('openai'), byId('wllama'), byId('extractive')];
    expect(importTokenizerEngine(gpuFirst)).toBe('extractive');
    expect(importTokenizerEngine([byId('webllm'), byId('openai')])).toBe('openai');
    expect(importTokenizerEngine()).toBe('extractive');
    expect(byId(importTokenizerEngine()).standaloneTokenizer).toBe(true);
  });
});
