import { describe, expect, it } from 'vitest';
import { KernelClock } from '../bench/gpu/kernel-clock';

/** WebGPU's classes as far as the clock touches them: passes write the timestamps a fake GPU clock gives. */
function fakeWebGPU(offers: boolean) {
  const written = new BigUint64Array(4096);
  let gpuNs = 1_000n;
  const durations: Record<string, bigint> = { matmul: 3_000_000n, attention: 5_000_000n, norm: 100_000n };
  class GPUComputePassEncoder {
    pipeline = '';
    constructor(private readonly d?: { timestampWrites?: { beginningOfPassWriteIndex: number; endOfPassWriteIndex: number } }) {}
    setPipeline(p: { entry: string }) {
      this.pipeline = p.entry;
    }
    end() {
      const t = this.d?.timestampWrites;
      if (!t) return;
      written[t.beginningOfPassWriteIndex] = gpuNs;
      gpuNs += durations[this.pipeline]!;
      written[t.endOfPassWriteIndex] = gpuNs;
    }
  }
  class GPUCommandEncoder {
    beginComputePass(d?: ConstructorParameters<typeof GPUComputePassEncoder>[0]) {
      return new GPUComputePassEncoder(d);
    }
    resolveQuerySet() {}
    copyBufferToBuffer() {}
    finish() {
      return {};
    }
  }
  class GPUDevice {
    asked: string[] = [];
    features = new Set<string>();
    queue = { submit: () => undefined };
    createQuerySet() {
      return {};
    }
    createBuffer() {
      return { mapAsync: async () => undefined, getMappedRange: () => written.slice().buffer, unmap: () => undefined, destroy: () => undefined };
    }
    createCommandEncoder() {
      return new GPUCommandEncoder();
    }
    createComputePipeline(d: { compute: { entryPoint: string } }) {
      return { entry: d.compute.entryPoint };
    }
    async createComputePipelineAsync(d: { compute: { entryPoint: string } }) {
      return { entry: d.compute.entryPoint };
    }
  }
  class GPUAdapter {
    features = new Set(offers ? ['timestamp-query', 'subgroups'] : ['subgroups']);
    async requestDevice(d: { requiredFeatures?: string[] } = {}) {
      const device = new GPUDevice();
      device.asked = d.requiredFeatures ?? [];
      device.features = new Set(device.asked);
      return device;
    }
  }
  const globals = {
    GPUAdapter,
    GPUDevice,
    GPUCommandEncoder,
    GPUComputePassEncoder,
    GPUBufferUsage: { QUERY_RESOLVE: 1, COPY_SRC: 2, MAP_READ: 4, COPY_DST: 8 },
    GPUMapMode: { READ: 1 },
  };
  return globals;
}

describe('the GPU benchmark’s kernel clock (timestamp queries around each compute pass)', () => {
  it('asks for timestamp-query, times each pass of an armed forward pass, and sums the GPU time by kernel name', async () => {
    const g = fakeWebGPU(true);
    Object.assign(globalThis, { GPUBufferUsage: g.GPUBufferUsage, GPUMapMode: g.GPUMapMode });
    const clock = KernelClock.install(g);
    const device = (await new g.GPUAdapter().requestDevice({ requiredFeatures: ['subgroups'] })) as InstanceType<typeof g.GPUDevice>;
    expect(device.asked).toEqual(['subgroups', 'timestamp-query']);
    expect(clock.ready).toBe(true);
    const pipelines = Object.fromEntries(
      await Promise.all(
        ['matmul', 'attention', 'norm'].map(async (n) => [n, await device.createComputePipelineAsync({ compute: { entryPoint: n } })] as const),
      ),
    );
    const dispatch = (name: string) => {
      const pass = device.createCommandEncoder().beginComputePass();
      pass.setPipeline(pipelines[name]!);
      pass.end();
    };
    dispatch('matmul'); // before arming: not timed
    expect(clock.arm('decode', 1, 40)).toBe(true);
    for (const k of ['norm', 'matmul', 'attention', 'matmul']) dispatch(k);
    clock.disarm();
    clock.noteWall('decode', 20);
    const times = await clock.collect();
    expect(times.offered).toBe(true);
    expect(times.decode).toEqual({
      kind: 'decode',
      tokens: 1,
      contextTokens: 40,
      passes: 4,
      untimed: 0,
      gpuMs: 11.1,
      wallMs: 20,
      kernels: [
        { name: 'matmul', dispatches: 2, ms: 6, share: Number((6 / 11.1).toFixed(4)) },
        { name: 'attention', dispatches: 1, ms: 5, share: Number((5 / 11.1).toFixed(4)) },
        { name: 'norm', dispatches: 1, ms: 0.1, share: Number((0.1 / 11.1).toFixed(4)) },
      ],
    });
    expect(times.prefill).toBeUndefined();
  });

  it('says so where the adapter offers no timestamp-query, and arms nothing', async () => {
    const g = fakeWebGPU(false);
    const clock = KernelClock.install(g);
    await new g.GPUAdapter().requestDevice();
    expect(clock.arm('prefill', 16, 0)).toBe(false);
    expect(await clock.collect()).toEqual({ offered: false, note: 'this adapter does not offer timestamp-query' });
  });
});
