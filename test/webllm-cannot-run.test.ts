import { afterEach, describe, expect, it } from 'vitest';
import type { GpuCapability } from '../src/engines/webllm/check/webgpu';
import { i18n } from '../src/ui/i18n';
import { cannotRunHere } from '../src/ui/engines/webllm/cannot-run';

const gpu = (status: GpuCapability['status']): GpuCapability => ({ status, fallback: false, shaderF16: false, adapter: '', message: null });

describe('why WebLLM cannot run here, as the Read form and Models both say it', () => {
  afterEach(() => i18n.changeLanguage('en'));

  it('names the browsers with WebGPU where there is none, and says the GPU is unusable where WebGPU found none', async () => {
    await i18n.changeLanguage('en');
    expect(cannotRunHere(gpu('ok'))).toBeNull();
    expect(cannotRunHere(gpu('no-api'))).toBe(
      'This browser has no WebGPU, so WebLLM cannot run here. WebGPU is in Chrome or Edge 113 and later, Safari 26 and later, and Firefox 141 and later (Windows; 145 and later on Apple-silicon Macs).',
    );
    // A browser with WebGPU is not sent to another browser: its GPU is what is missing.
    expect(cannotRunHere(gpu('no-adapter'))).toMatch(/^This browser has WebGPU but found no usable GPU .*so WebLLM cannot run here\.$/);
    expect(cannotRunHere(gpu('no-adapter'))).not.toContain('Chrome');
  });

  it('says it in Simplified Chinese too', async () => {
    await i18n.changeLanguage('zh-CN');
    expect(cannotRunHere(gpu('no-api'))).toContain('本浏览器没有 WebGPU，因此 WebLLM 无法在此运行');
    expect(cannotRunHere(gpu('no-adapter'))).toContain('找不到可用的 GPU');
  });
});
