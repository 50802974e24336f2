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
  /** What to tell the person, or null when all is well. */
  message: string | null;
}

// Only what is read here: lib.dom may not know WebGPU yet.
interface AdapterLike {
  features: { has(feature: string): boolean };
  info?: { vendor?: string; architecture?: string; description?: string; isFallbackAdapter?: boolean };
  isFallbackAdapter?: boolean;
  limits?: { maxBufferSize?: number };
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
  const fallback = Boolean(adapter.info?.isFallbackAdapter ?? adapter.isFallbackAdapter);
  const name = [adapter.info?.vendor, adapter.info?.architecture].filter(Boolean).join(' ') || adapter.info?.description || 'unknown GPU';
  const capability: GpuCapability = {
    status: 'ok',
    fallback,
    shaderF16: adapter.features.has('shader-f16'),
    adapter: name,
    message: fallback ? FALLBACK_WARNING : null,
  };
  if (adapter.limits?.maxBufferSize !== undefined) capability.maxBufferSize = adapter.limits.maxBufferSize;
  return capability;
}

/**
 * WebLLM is the default engine only on a hardware adapter: on a software one a
 * 7B model would take hours per book, so the fast engines stay first.
 */
export function preferWebLLM(c: GpuCapability): boolean {
  return c.status === 'ok' && !c.fallback;
}
