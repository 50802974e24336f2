import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { toggleFlags } from '../bench/gpu/dawn-toggles';
import { BenchUsageError, parseBenchArgs } from '../bench/gpu/options';
import { chooseRuntime } from '../bench/gpu/runtime-choice';
import { runGpuBench } from '../bench/gpu/bench';
import { dawnFlags } from '../src/engines/webllm/node/dawn';
import { versionForLibraryBytes, WEBLLM_0_2_79, WEBLLM_0_2_86 } from '../src/engines/webllm/versions';
import { LIBRARY_PATH } from './support/synthetic-model';

const library = new Uint8Array(readFileSync(LIBRARY_PATH));

/** The smallest wasm module that imports one function, env.NAME. */
function importing(name: string): Uint8Array<ArrayBuffer> {
  const field = [...new TextEncoder().encode(name)];
  const imports = [1, 3, ...new TextEncoder().encode('env'), field.length, ...field, 0, 0];
  return new Uint8Array([0, 0x61, 0x73, 0x6d, 1, 0, 0, 0, 1, 4, 1, 0x60, 0, 0, 2, imports.length, ...imports]);
}

describe('the GPU benchmark’s two WebLLM runtimes', () => {
  it('tells a library’s runtime by what it imports: the v0_2_48 libraries TVMWasmPackedCFunc, the newer ones TVM’s FFI', () => {
    expect(versionForLibraryBytes(library)).toBe(WEBLLM_0_2_79);
    expect(versionForLibraryBytes(importing('TVMFFIWasmSafeCall'))).toBe(WEBLLM_0_2_86);
    expect(versionForLibraryBytes(importing('somethingElse'))).toBeUndefined();
    expect(versionForLibraryBytes(new TextEncoder().encode('not wasm'))).toBeUndefined();
  });

  it('picks the runtime from the library’s folder, else its imports; --webllm overrides only into a runtime that links it', () => {
    expect(chooseRuntime('/x/web-llm-models/v0_2_86/base/Qwen2-7B.wasm', importing('nothing'))).toBe(WEBLLM_0_2_86);
    expect(chooseRuntime('/fixtures/lib.wasm', library)).toBe(WEBLLM_0_2_79);
    expect(chooseRuntime('/fixtures/lib.wasm', importing('TVMFFIWasmSafeCall'))).toBe(WEBLLM_0_2_86);
    expect(chooseRuntime('/fixtures/lib.wasm', library, '0.2.79')).toBe(WEBLLM_0_2_79);
    expect(() => chooseRuntime('/fixtures/lib.wasm', library, '0.2.50')).toThrow(/0\.2\.86 or 0\.2\.79/);
  });

  it('refuses --webllm 0.2.86 with a v0_2_48 library before touching the GPU, naming the folders each runtime takes', async () => {
    const fail = runGpuBench(
      { size: 'tiny', shape: {}, library: LIBRARY_PATH, tokenizer: 'none', text: 'none', cacheDir: '/nowhere', out: '/nowhere/x.json', webllm: '0.2.86' },
      {
        load: () => Promise.reject(new Error('no runtime should load')),
        dawnAddon: join('/nowhere', 'dawn.node'),
        log: () => undefined,
      },
    );
    await expect(fail).rejects.toThrow(BenchUsageError);
    await expect(fail).rejects.toThrow(
      /Qwen2-0\.5B-Instruct-q4f32_1-ctx4k_cs1k-webgpu\.wasm is a model library for WebLLM 0\.2\.79 \(from web-llm-models\/v0_2_48\/\), so --webllm 0\.2\.86 cannot run it: WebLLM 0\.2\.86 runs the libraries of web-llm-models\/v0_2_86\/base\/; WebLLM 0\.2\.79 runs the libraries of web-llm-models\/v0_2_48\//,
    );
  });
});

describe('Dawn’s toggles for the benchmark and the command line', () => {
  it('turns --dawn-toggle names into Dawn’s enable and disable flags, and refuses what is no toggle name', () => {
    expect(toggleFlags(['vulkan_enable_f16_on_nvidia', 'skip_validation', '!timestamp_quantization'])).toEqual({
      flags: ['enable-dawn-features=vulkan_enable_f16_on_nvidia,skip_validation', 'disable-dawn-features=timestamp_quantization'],
      enabled: ['vulkan_enable_f16_on_nvidia', 'skip_validation'],
      disabled: ['timestamp_quantization'],
    });
    expect(toggleFlags([])).toEqual({ flags: [], enabled: [], disabled: [] });
    expect(() => toggleFlags(['enable-dawn-features=x'])).toThrow(BenchUsageError);
    const o = parseBenchArgs(['--dawn-toggle', 'a_b', '--dawn-toggle', 'c', '--cpu-profile', 'p.cpuprofile'], {
      library: 'l',
      tokenizer: 't',
      text: 'b',
      cacheDir: 'c',
      out: 'o',
    });
    expect(o).toMatchObject({ dawnToggles: ['a_b', 'c'], cpuProfile: 'p.cpuprofile' });
  });

  it('reads the same toggles from MEMAGENT_DAWN_FLAGS, several after one enable-dawn-features=', () => {
    expect(dawnFlags({ MEMAGENT_DAWN_FLAGS: 'backend=vulkan, enable-dawn-features=vulkan_enable_f16_on_nvidia,skip_validation,adapter=NVIDIA' })).toEqual([
      'backend=vulkan',
      'enable-dawn-features=vulkan_enable_f16_on_nvidia,skip_validation',
      'adapter=NVIDIA',
    ]);
    expect(dawnFlags({})).toEqual([]);
  });
});
