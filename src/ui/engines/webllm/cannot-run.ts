import type { GpuCapability } from '../../../engines/webllm/check/webgpu';
import { i18n } from '../../i18n';

/**
 * Why WebLLM cannot run in this browser, in the page's language and in the
 * same words wherever it is said (under Engine on the Read form, in Models),
 * or null where it can.
 */
export function cannotRunHere(gpu: GpuCapability): string | null {
  if (gpu.status === 'ok') return null;
  return i18n.t(gpu.status === 'no-api' ? 'webllm.noApi' : 'webllm.noAdapter');
}
