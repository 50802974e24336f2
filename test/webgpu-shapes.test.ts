import { describe, expect, it } from 'vitest';
import { type AdapterLike, checkWebGPU, FALLBACK_WARNING, type GpuLike } from '../src/engines/webllm/check/webgpu';
import { bufferLimits } from '../src/engines/webllm/engine';

const features = (...names: string[]) => new Set(names);
const gpuWith = (adapter: AdapterLike | null): GpuLike => ({ requestAdapter: async () => adapter });

// The adapter shapes each engine hands out, reduced to what the capability check reads.
const shapes: { engine: string; adapter: AdapterLike; name: string; fallback: boolean; shaderF16: boolean }[] = [
  {
    engine: 'Chromium 136+ on a hardware GPU: info with isFallbackAdapter',
    adapter: { features: features('shader-f16'), info: { vendor: 'nvidia', architecture: 'ada', isFallbackAdapter: false } },
    name: 'nvidia ada',
    fallback: false,
    shaderF16: true,
  },
  {
    engine: 'Chromium with SwiftShader: info flags the fallback adapter',
    adapter: { features: features(), info: { vendor: 'google', architecture: 'swiftshader', isFallbackAdapter: true } },
    name: 'google swiftshader',
    fallback: true,
    shaderF16: false,
  },
  {
    engine: 'Chromium 121–126: no info, requestAdapterInfo(), the flag on the adapter',
    adapter: {
      features: features('shader-f16'),
      requestAdapterInfo: async () => ({ vendor: 'intel', architecture: 'gen-12lp' }),
      isFallbackAdapter: false,
    },
    name: 'intel gen-12lp',
    fallback: false,
    shaderF16: true,
  },
  {
    engine: 'Safari 26: info without any fallback flag, Apple GPU',
    adapter: { features: features('shader-f16'), info: { vendor: 'apple', architecture: 'metal-3', device: '', description: '' } },
    name: 'apple metal-3',
    fallback: false,
    shaderF16: true,
  },
  {
    engine: 'Firefox 141: empty vendor strings, description only, the flag on the adapter',
    adapter: { features: features(), info: { vendor: '', architecture: '', description: 'AMD Radeon RX 6600' }, isFallbackAdapter: false },
    name: 'AMD Radeon RX 6600',
    fallback: false,
    shaderF16: false,
  },
  {
    engine: 'a software adapter that reports no flag (llvmpipe): known by its name',
    adapter: { features: features(), info: { vendor: 'mesa', architecture: '', description: 'llvmpipe (LLVM 17.0.6, 256 bits)' } },
    name: 'mesa',
    fallback: true,
    shaderF16: false,
  },
  {
    engine: 'WARP on Windows with no flag: known by its name',
    adapter: { features: features(), requestAdapterInfo: async () => ({ description: 'Microsoft Basic Render Driver' }) },
    name: 'Microsoft Basic Render Driver',
    fallback: true,
    shaderF16: false,
  },
  {
    engine: 'an engine whose deprecated requestAdapterInfo() throws',
    adapter: {
      features: features('shader-f16'),
      requestAdapterInfo: () => Promise.reject(new TypeError('requestAdapterInfo is not a function')),
    },
    name: 'unknown GPU',
    fallback: false,
    shaderF16: true,
  },
  {
    engine: 'an adapter with neither info nor requestAdapterInfo nor features',
    adapter: {},
    name: 'unknown GPU',
    fallback: false,
    shaderF16: false,
  },
];

describe('the WebGPU capability check reads every engine’s adapter shape', () => {
  for (const shape of shapes) {
    it(shape.engine, async () => {
      const c = await checkWebGPU(gpuWith(shape.adapter));
      expect(c).toMatchObject({ status: 'ok', adapter: shape.name, fallback: shape.fallback, shaderF16: shape.shaderF16 });
      expect(c.message).toBe(shape.fallback ? FALLBACK_WARNING : null);
    });
  }

  it('keeps the buffer limits only where the adapter reports a number, and hands both to the batch size', async () => {
    const withLimit = await checkWebGPU(gpuWith({ features: features(), limits: { maxBufferSize: 2 ** 31, maxStorageBufferBindingSize: 2 ** 30 } }));
    expect(withLimit.maxBufferSize).toBe(2 ** 31);
    expect(withLimit.maxStorageBufferBindingSize).toBe(2 ** 30);
    expect(bufferLimits(withLimit)).toEqual({ maxBufferSize: 2 ** 31, maxStorageBufferBindingSize: 2 ** 30 });
    const without = await checkWebGPU(gpuWith({ features: features(), limits: {} }));
    expect('maxBufferSize' in without).toBe(false);
    expect('maxStorageBufferBindingSize' in without).toBe(false);
    expect(bufferLimits(without)).toEqual({});
  });

  it('says no adapter when requestAdapter resolves null or throws, and no API without navigator.gpu', async () => {
    expect((await checkWebGPU(gpuWith(null))).status).toBe('no-adapter');
    const throwing: GpuLike = { requestAdapter: () => Promise.reject(new Error('GPU process crashed')) };
    const c = await checkWebGPU(throwing);
    expect(c.status).toBe('no-adapter');
    expect(c.message).toMatch(/found no usable GPU/);
    const none = await checkWebGPU(undefined);
    expect(none.status).toBe('no-api');
    expect(none.message).toMatch(/has no WebGPU/);
  });

  it('reads info that is a getter on the prototype, as real GPUAdapterInfo objects are', async () => {
    class Info {
      get vendor() {
        return 'apple';
      }
      get architecture() {
        return 'common-3';
      }
    }
    const c = await checkWebGPU(gpuWith({ features: features('shader-f16'), info: new Info() }));
    expect(c).toMatchObject({ adapter: 'apple common-3', fallback: false, shaderF16: true });
  });
});
