/**
 * What this browser's WebGPU offers, found before anything is downloaded: a
 * model of several gigabytes is useless where it cannot run.
 */

export type GpuStatus = 'ok' | 'no-api' | 'no-adapter';

export interface GpuCapability {
  status: GpuStatus;
  /** A software adapter (SwiftShader, WARP): it runs, but a 7B model crawls. */
  fallback: boolean;
  /** q4f16_1 models need it; without it the q4f32_1 builds are used. */
  shaderF16: boolean;
  /** Vendor and architecture, for the person to recognise their GPU. */
  adapter: string;
  maxBufferSize?: number;
  /** The largest buffer a shader may bind: a batch's cache keeps each layer's pages in one. */
  maxStorageBufferBindingSize?: number;
  /** What to tell the person, or null when all is well. */
  message: string | null;
}

interface AdapterInfoLike {
  vendor?: string;
  architecture?: string;
  device?: string;
  description?: string;
  isFallbackAdapter?: boolean;
}

/**
 * Only what is read here, each part optional, since engines differ: Chromium 127+ and Safari 26 have
 * `info`, older Chromium and Firefox builds only `requestAdapterInfo()`, and `isFallbackAdapter`
 * sits on `info` (Chromium 136+), on the adapter (Firefox, older Chromium) or nowhere (Safari).
 * lib.dom may not know WebGPU yet.
 */
export interface AdapterLike {
  features?: { has(feature: string): boolean };
  info?: AdapterInfoLike;
  requestAdapterInfo?(): Promise<AdapterInfoLike>;
  isFallbackAdapter?: boolean;
  limits?: { maxBufferSize?: number; maxStorageBufferBindingSize?: number };
}

// Software adapters by name, for engines that report no fallback flag: SwiftShader, Mesa's llvmpipe/lavapipe, Windows' WARP.
const SOFTWARE_ADAPTER = /swiftshader|llvmpipe|lavapipe|softpipe|microsoft basic render/i;

async function adapterInfo(adapter: AdapterLike): Promise<AdapterInfoLike> {
  try {
    if (adapter.info) return adapter.info;
    if (typeof adapter.requestAdapterInfo === 'function') return (await adapter.requestAdapterInfo()) ?? {};
  } catch {
    // Some builds throw on the deprecated call or on reading info: the name is then unknown, nothing more.
  }
  return {};
}

function hasFeature(adapter: AdapterLike, feature: string): boolean {
  try {
    return adapter.features?.has(feature) === true;
  } catch {
    return false;
  }
}

/** The facts the app uses from an adapter, read the same way whatever shape this engine gives it. */
async function readAdapter(adapter: AdapterLike): Promise<{ name: string; fallback: boolean; shaderF16: boolean }> {
  const info = await adapterInfo(adapter);
  const text = (v: unknown) => (typeof v === 'string' ? v.trim() : '');
  const name = [text(info.vendor), text(info.architecture)].filter(Boolean).join(' ') || text(info.description) || text(info.device) || 'unknown GPU';
  const flag = typeof info.isFallbackAdapter === 'boolean' ? info.isFallbackAdapter : adapter.isFallbackAdapter;
  const described = [info.vendor, info.architecture, info.device, info.description].map(text).join(' ');
  const fallback = typeof flag === 'boolean' ? flag : SOFTWARE_ADAPTER.test(described);
  return { name, fallback, shaderF16: hasFeature(adapter, 'shader-f16') };
}

export interface GpuLike {
  requestAdapter(options?: { powerPreference?: 'high-performance' | 'low-power' }): Promise<AdapterLike | null>;
}

export const WEBGPU_BROWSERS =
  'Chrome or Edge 113 and later (Windows, macOS, ChromeOS, Android), Safari 26 and later (macOS, iOS, iPadOS), ' +
  'or Firefox 141 and later (Windows; 145 and later on Apple-silicon Macs)';

export function noWebGPUMessage(status: Exclude<GpuStatus, 'ok'>): string {
  const why =
    status === 'no-api'
      ? 'This browser has no WebGPU, so the WebLLM engine cannot run here.'
      : 'This browser has WebGPU but found no usable GPU (it may be blocked, or turned off in the browser settings), so the WebLLM engine cannot run here.';
  return `${why} WebGPU is in ${WEBGPU_BROWSERS}. Until then, choose another engine: Extractive (no model) reads without a GPU.`;
}

export const FALLBACK_WARNING =
  'Only a software GPU (a fallback adapter) is available: WebLLM will run, but very slowly — minutes per chunk for small models, ' +
  'far longer for 7B. A browser with hardware WebGPU, or another engine, will read much faster.';

function currentGpu(): GpuLike | undefined {
  return (globalThis.navigator as { gpu?: GpuLike } | undefined)?.gpu;
}

export async function checkWebGPU(gpu: GpuLike | undefined = currentGpu()): Promise<GpuCapability> {
  const none = (status: Exclude<GpuStatus, 'ok'>): GpuCapability => ({
    status,
    fallback: false,
    shaderF16: false,
    adapter: '',
    message: noWebGPUMessage(status),
  });
  if (!gpu) return none('no-api');
  let adapter: AdapterLike | null;
  try {
    adapter = await gpu.requestAdapter({ powerPreference: 'high-performance' });
  } catch {
    adapter = null;
  }
  if (!adapter) return none('no-adapter');
  const { name, fallback, shaderF16 } = await readAdapter(adapter);
  const capability: GpuCapability = {
    status: 'ok',
    fallback,
    shaderF16,
    adapter: name,
    message: fallback ? FALLBACK_WARNING : null,
  };
  const { maxBufferSize, maxStorageBufferBindingSize } = adapter.limits ?? {};
  if (typeof maxBufferSize === 'number') capability.maxBufferSize = maxBufferSize;
  if (typeof maxStorageBufferBindingSize === 'number') capability.maxStorageBufferBindingSize = maxStorageBufferBindingSize;
  return capability;
}
