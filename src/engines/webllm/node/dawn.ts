/**
 * WebGPU outside a browser: Dawn (Chromium's WebGPU) as a node addon, from
 * npm `webgpu`. It drives the machine's own GPU through Vulkan (Linux,
 * Windows), Metal (macOS) or D3D12 (Windows). Its `navigator.gpu` is
 * installed where WebLLM looks for it, and the buffers WebLLM allocates are
 * counted, since WebGPU itself reports no memory use.
 */
import { createRequire } from 'node:module';
import { setPriority } from 'node:os';
import { join } from 'node:path';
import { type AdapterLike, checkWebGPU, type GpuCapability, type GpuLike } from '../check/webgpu';

/** What `dawn.node` exports. */
interface DawnModule {
  create(flags: string[]): GpuLike;
  globals: Record<string, unknown>;
}

/** GPU memory WebLLM asked for: bytes in live buffers now, and at most so far. */
export interface GpuMemory {
  live: number;
  peak: number;
}

export interface Dawn {
  gpu: GpuLike;
  memory: GpuMemory;
}

/** Where `dawn.node` is for this platform inside the `webgpu` package, or beside a bundle (`dir`). */
export function dawnAddonPath(dir?: string): string {
  if (dir) return join(dir, 'dawn.node');
  const arch = process.platform === 'darwin' ? 'universal' : process.arch;
  const pkg = createRequire(import.meta.url).resolve('webgpu/package.json');
  return join(pkg, '..', 'dist', `${process.platform}-${arch}`, 'dawn.node');
}

/**
 * Dawn's own flags (`backend=vulkan`, `adapter=NAME`, Dawn's toggles as
 * `enable-dawn-features=NAME` or `disable-dawn-features=NAME`, …) from
 * MEMAGENT_DAWN_FLAGS, comma-separated. A bare name after a toggle flag is one
 * more toggle of it: `enable-dawn-features=a,b` turns on both.
 */
export function dawnFlags(env: Record<string, string | undefined> = process.env): string[] {
  const flags: string[] = [];
  for (const part of (env.MEMAGENT_DAWN_FLAGS ?? '').split(',').map((f) => f.trim())) {
    if (!part) continue;
    const last = flags.length - 1;
    if (!part.includes('=') && last >= 0 && /^(enable|disable)-dawn-features=/.test(flags[last]!)) flags[last] += `,${part}`;
    else flags.push(part);
  }
  return flags;
}

/** Sums the sizes of the buffers created on any device and not yet destroyed. */
function countBuffers(globals: Record<string, unknown>, memory: GpuMemory): void {
  const device = (globals.GPUDevice as { prototype?: Record<string, unknown> } | undefined)?.prototype;
  const buffer = (globals.GPUBuffer as { prototype?: Record<string, unknown> } | undefined)?.prototype;
  if (!device || !buffer || device.memagentCounted) return;
  const sizes = new WeakMap<object, number>();
  const create = device.createBuffer as (this: unknown, descriptor: { size: number }) => object;
  const destroy = buffer.destroy as (this: object) => void;
  device.createBuffer = function (this: unknown, descriptor: { size: number }) {
    const made = create.call(this, descriptor);
    sizes.set(made, descriptor.size);
    memory.live += descriptor.size;
    memory.peak = Math.max(memory.peak, memory.live);
    return made;
  };
  buffer.destroy = function (this: object) {
    const size = sizes.get(this);
    if (size !== undefined) {
      sizes.delete(this);
      memory.live -= size;
    }
    return destroy.call(this);
  };
  device.memagentCounted = true;
}

let opened: Dawn | undefined;

/**
 * Loads Dawn once per process and puts its `navigator.gpu` and WebGPU's
 * classes on globalThis. Throws where the addon cannot load (an unsupported
 * platform, a missing Vulkan loader): the caller says so.
 */
export function openDawn(options: { addon?: string; flags?: string[] } = {}): Dawn {
  if (opened) return opened;
  const { create, globals } = createRequire(import.meta.url)(options.addon ?? dawnAddonPath()) as DawnModule;
  Object.assign(globalThis, globals);
  const memory: GpuMemory = { live: 0, peak: 0 };
  countBuffers(globals, memory);
  const gpu = create(options.flags ?? dawnFlags());
  // Node 21+ has a navigator of its own (without gpu); node 20 has none.
  const nav = (globalThis as { navigator?: object }).navigator;
  if (nav) Object.defineProperty(nav, 'gpu', { value: gpu, configurable: true });
  else Object.defineProperty(globalThis, 'navigator', { value: { gpu }, configurable: true, writable: true });
  opened = { gpu, memory };
  return opened;
}

/**
 * Dawn for node waits for the GPU by polling on the main thread. On a
 * software adapter (SwiftShader) the GPU's work runs on threads of this same
 * process, and the polling takes a core from them: measured here on two
 * cores, a step ran three times faster once the main thread yielded to them.
 * Called once those threads exist (after a model is loaded); on Linux a nice
 * value is per thread, so only the main thread yields. Elsewhere it does
 * nothing.
 */
export function yieldToSoftwareGpu(): void {
  if (process.platform !== 'linux') return;
  try {
    setPriority(0, 19);
  } catch {
    // not allowed here: the GPU's threads then share the cores as they are
  }
}

/** What the adapter says about itself, for a benchmark's record: WebGPU gives no more. */
export interface AdapterReport {
  vendor: string;
  architecture: string;
  device: string;
  description: string;
  fallback: boolean;
  features: string[];
  limits: Record<string, number>;
}

export async function describeAdapter(gpu: GpuLike): Promise<AdapterReport | undefined> {
  const adapter = (await gpu.requestAdapter({ powerPreference: 'high-performance' }).catch(() => null)) as
    (AdapterLike & { features?: Iterable<string>; limits?: Record<string, unknown> }) | null;
  if (!adapter) return undefined;
  const info = (adapter.info ?? {}) as Record<string, unknown>;
  const text = (v: unknown) => (typeof v === 'string' ? v : '');
  const limits: Record<string, number> = {};
  for (const name of ['maxBufferSize', 'maxStorageBufferBindingSize', 'maxComputeWorkgroupStorageSize', 'maxComputeInvocationsPerWorkgroup']) {
    const v = adapter.limits?.[name];
    if (typeof v === 'number') limits[name] = v;
  }
  return {
    vendor: text(info.vendor),
    architecture: text(info.architecture),
    device: text(info.device),
    description: text(info.description),
    fallback: info.isFallbackAdapter === true,
    features: [...(adapter.features ?? [])].sort(),
    limits,
  };
}

const NO_DAWN = 'WebGPU for node (Dawn, npm "webgpu") could not start on this machine';

/**
 * This machine's GPU as the app's WebGPU check sees it, through Dawn; where
 * Dawn cannot start or finds no adapter, a message that says what to do.
 */
export async function checkNodeGpu(open: () => Dawn = () => openDawn()): Promise<GpuCapability & { dawn?: Dawn }> {
  let dawn: Dawn;
  try {
    dawn = open();
  } catch (e) {
    return {
      status: 'no-api',
      fallback: false,
      shaderF16: false,
      adapter: '',
      message: `${NO_DAWN} (${(e as Error).message.split('\n')[0]}). ${NO_GPU_ADVICE}`,
    };
  }
  const capability = await checkWebGPU(dawn.gpu);
  if (capability.status !== 'ok') {
    return {
      ...capability,
      message: `No GPU adapter: WebGPU for node (Dawn) found no GPU it can use through ${gpuApis()} here. ${NO_GPU_ADVICE}`,
    };
  }
  if (capability.fallback) {
    capability.message = `Only a software GPU (${capability.adapter}) is available: WebLLM runs on it, but very slowly — minutes per step even for a 0.5B model.`;
  }
  return { ...capability, dawn };
}

function gpuApis(): string {
  return process.platform === 'darwin' ? 'Metal' : process.platform === 'win32' ? 'D3D12 or Vulkan' : 'Vulkan (is a Vulkan driver and libvulkan1 installed?)';
}

export const NO_GPU_ADVICE =
  'Read with a model server instead (--engine openai --base-url URL: vLLM, SGLang, Ollama or llama.cpp’s llama-server), or in the app with its llama.cpp engine, which needs no GPU.';
