import { prebuiltAppConfig } from '@mlc-ai/web-llm';
import { describe, expect, it } from 'vitest';
import {
  appConfigFor,
  chatFamilyOf,
  chooseModel,
  cleanModelUrl,
  customEntry,
  customModelProblem,
  DEFAULT_MODEL_ID,
  engineConfigFor,
  entryFromConfig,
  memagentProblem,
  qwenModels,
} from '../src/engines/webllm/models/models';

const models = qwenModels(prebuiltAppConfig.model_list);

describe('the WebLLM model list', () => {
  it('holds Qwen2.5 Instruct 0.5B–7B, then Qwen3 0.6B–8B, in q4f16_1 and q4f32_1 from the pinned prebuilt list, smallest first', () => {
    expect(models.map((m) => m.id)).toEqual([
      ...['0.5', '1.5', '3', '7'].flatMap((s) => [`Qwen2.5-${s}B-Instruct-q4f16_1-MLC`, `Qwen2.5-${s}B-Instruct-q4f32_1-MLC`]),
      ...['0.6', '1.7', '4', '8'].flatMap((s) => [`Qwen3-${s}B-q4f16_1-MLC`, `Qwen3-${s}B-q4f32_1-MLC`]),
    ]);
    const byId = Object.fromEntries(models.map((m) => [m.id, m]));
    expect(byId[DEFAULT_MODEL_ID]).toMatchObject({ vramMB: 5107, needsF16: true, contextLimit: 32768, approxDownloadMB: 4300, custom: false });
    expect(byId['Qwen2.5-7B-Instruct-q4f32_1-MLC']).toMatchObject({ vramMB: 5900, needsF16: false });
    expect(byId['Qwen2.5-0.5B-Instruct-q4f16_1-MLC']?.vramMB).toBe(945);
    // The 7B runs on the Qwen2-7B library, which a converted RL-MemAgent-7B can use too.
    expect(byId[DEFAULT_MODEL_ID]?.libUrl).toMatch(/Qwen2-7B-Instruct-q4f16_1.*\.wasm$/);
    expect(byId[DEFAULT_MODEL_ID]?.modelUrl).toBe('https://huggingface.co/mlc-ai/Qwen2.5-7B-Instruct-q4f16_1-MLC/resolve/main/');
  });

  it('lists Qwen3 with its sizes, its own context limit and its chat family, and Qwen2.5 with its own', () => {
    const byId = Object.fromEntries(models.map((m) => [m.id, m]));
    expect(byId['Qwen3-4B-q4f16_1-MLC']).toMatchObject({
      label: 'Qwen3 4B (q4f16_1)',
      vramMB: 3432,
      needsF16: true,
      contextLimit: 40960,
      approxDownloadMB: 2250,
      family: 'qwen3',
      custom: false,
    });
    expect(byId['Qwen3-8B-q4f32_1-MLC']).toMatchObject({ vramMB: 6853, needsF16: false, approxDownloadMB: 5120 });
    expect(byId['Qwen3-0.6B-q4f16_1-MLC']?.vramMB).toBe(1403);
    // InfMem-4B is a Qwen3-4B: the Qwen3-4B library a converted InfMem-4B runs on.
    expect(byId['Qwen3-4B-q4f16_1-MLC']?.libUrl).toMatch(/Qwen3-4B-q4f16_1.*\.wasm$/);
    expect(byId['Qwen3-4B-q4f16_1-MLC']?.modelUrl).toBe('https://huggingface.co/mlc-ai/Qwen3-4B-q4f16_1-MLC/resolve/main/');
    for (const m of models) expect(chatFamilyOf(m)).toBe(m.id.startsWith('Qwen3-') ? 'qwen3' : 'qwen2.5');
    // q0 builds and other families stay out.
    expect(models.some((m) => /q0f|Llama|Phi/.test(m.id))).toBe(false);
  });

  it('reads a converted model’s chat family from its library, else from its name', () => {
    const spec = { id: 'custom:M', label: 'M', modelUrl: 'https://h.example/M', contextLimit: 32768 };
    const lib = (file: string) => `https://l.example/v0_2_80/${file}`;
    expect(chatFamilyOf(customEntry({ ...spec, libUrl: lib('Qwen3-4B-q4f16_1_cs1k-webgpu.wasm') }))).toBe('qwen3');
    expect(chatFamilyOf(customEntry({ ...spec, libUrl: lib('Qwen2-7B-Instruct-q4f16_1-ctx4k_cs1k-webgpu.wasm') }))).toBe('qwen2.5');
    // The library decides over the name: RL-MemAgent on a Qwen2 library even if named after InfMem.
    expect(chatFamilyOf(customEntry({ ...spec, label: 'InfMem try', libUrl: lib('Qwen2-7B-Instruct-q4f16_1.wasm') }))).toBe('qwen2.5');
    expect(chatFamilyOf(customEntry({ ...spec, label: 'InfMem-4B', libUrl: 'https://l.example/mine.wasm' }))).toBe('qwen3');
    expect(chatFamilyOf(customEntry({ ...spec, label: 'RL-MemAgent-7B', libUrl: 'https://l.example/mine.wasm' }))).toBe('qwen2.5');
  });

  it('refuses MemAgent reads with a Qwen3 model, saying to read with InfMem', () => {
    const byId = Object.fromEntries(models.map((m) => [m.id, m]));
    expect(memagentProblem(byId['Qwen3-1.7B-q4f16_1-MLC']!)).toMatch(
      /^Qwen3 1\.7B \(q4f16_1\) is a Qwen3 model, which reads with InfMem only.*Read with InfMem/,
    );
    expect(memagentProblem(byId[DEFAULT_MODEL_ID]!)).toBeNull();
    const infmem = customEntry({
      id: 'custom:InfMem-4B',
      label: 'InfMem-4B',
      modelUrl: 'https://h.example/I',
      libUrl: 'https://l.example/Qwen3-4B-q4f16_1.wasm',
      contextLimit: 32768,
    });
    expect(memagentProblem(infmem)).toMatch(/InfMem-4B is a Qwen3 model/);
  });

  it('chooses the q4f32_1 build where the adapter lacks shader-f16, and says why', () => {
    expect(chooseModel(DEFAULT_MODEL_ID, models, { shaderF16: true })).toEqual({ entry: models.find((m) => m.id === DEFAULT_MODEL_ID), note: null });
    const chosen = chooseModel(DEFAULT_MODEL_ID, models, { shaderF16: false });
    expect(chosen.entry?.id).toBe('Qwen2.5-7B-Instruct-q4f32_1-MLC');
    expect(chosen.note).toMatch(/lacks the shader-f16 feature that Qwen2.5-7B-Instruct-q4f16_1-MLC needs/);
    expect(chooseModel('Qwen2.5-3B-Instruct-q4f32_1-MLC', models, { shaderF16: false }).note).toBeNull();
  });

  it('cleans a model URL as WebLLM does', () => {
    expect(cleanModelUrl('https://huggingface.co/me/RL-MemAgent-7B-MLC')).toBe('https://huggingface.co/me/RL-MemAgent-7B-MLC/resolve/main/');
    expect(cleanModelUrl('https://huggingface.co/me/M/resolve/v2')).toBe('https://huggingface.co/me/M/resolve/v2/');
    expect(cleanModelUrl('http://127.0.0.1:4195/m/good/')).toBe('http://127.0.0.1:4195/m/good/resolve/main/');
  });

  it('keeps a custom model in the run’s engine config, so a resume needs no lookup', () => {
    const custom = customEntry({ id: 'custom:RL', label: 'RL', modelUrl: 'https://h.example/RL', libUrl: 'https://l.example/q.wasm', contextLimit: 16384 });
    const config = engineConfigFor(custom);
    expect(config).toEqual({
      model: 'custom:RL',
      label: 'RL',
      modelUrl: 'https://h.example/RL/resolve/main/',
      libUrl: 'https://l.example/q.wasm',
      contextLimit: 16384,
    });
    expect(entryFromConfig(config, models)).toEqual(custom);
    expect(engineConfigFor(models[0]!)).toEqual({ model: models[0]!.id });
    expect(entryFromConfig(undefined, models).id).toBe(DEFAULT_MODEL_ID);
    expect(() => entryFromConfig({ model: 'Llama-9B' }, models)).toThrow(/not in this version's list/);
    expect(appConfigFor(custom)).toEqual({
      model_list: [{ model: custom.modelUrl, model_id: 'custom:RL', model_lib: custom.libUrl }],
      cacheBackend: 'cache',
    });
  });

  it('checks a custom model’s fields with messages that say what to fix', () => {
    const ok = { label: 'RL', modelUrl: 'https://h.example/RL', libUrl: 'https://l.example/q.wasm', contextLimit: 32768 };
    expect(customModelProblem(ok)).toBeNull();
    expect(customModelProblem({ ...ok, label: ' ' })).toMatch(/name/);
    expect(customModelProblem({ ...ok, modelUrl: 'RL' })).toMatch(/model URL must be a full http/);
    expect(customModelProblem({ ...ok, libUrl: 'https://l.example/q.bin' })).toMatch(/\.wasm/);
    expect(customModelProblem({ ...ok, contextLimit: 4096 })).toMatch(/8,192/);
  });
});
