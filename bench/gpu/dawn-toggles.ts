/**
 * Dawn's toggles for a run: `--dawn-toggle NAME` turns one on
 * (`enable-dawn-features=NAME,…` to the addon's `create`), `--dawn-toggle
 * !NAME` turns one off (`disable-dawn-features=…`). The record keeps the
 * adapter's features with and without them, from a second Dawn instance made
 * without the toggles: `vulkan_enable_f16_on_nvidia`, for one, is what grants
 * `shader-f16` on NVIDIA under Vulkan.
 */
import { createRequire } from 'node:module';
import { type AdapterReport, dawnAddonPath, describeAdapter } from '../../src/engines/webllm/node/dawn';
import type { GpuLike } from '../../src/engines/webllm/check/webgpu';
import { BenchUsageError } from './options';

export interface DawnTogglesReport {
  /** The flags Dawn was created with (MEMAGENT_DAWN_FLAGS and the toggles). */
  flags: string[];
  enabled: string[];
  disabled: string[];
  /** The adapter's features without the toggles, and what the toggles added or took away. */
  featuresWithout?: string[];
  gained?: string[];
  lost?: string[];
}

/** Dawn's flags for the toggles given; a name must look like one of Dawn's (snake_case). */
export function toggleFlags(toggles: readonly string[]): { flags: string[]; enabled: string[]; disabled: string[] } {
  const enabled: string[] = [];
  const disabled: string[] = [];
  for (const raw of toggles) {
    const off = raw.startsWith('!');
    const name = off ? raw.slice(1) : raw;
    if (!/^[a-z0-9_]+$/.test(name))
      throw new BenchUsageError(`--dawn-toggle takes one of Dawn's toggle names (snake_case, like vulkan_enable_f16_on_nvidia), got "${raw}".`);
    (off ? disabled : enabled).push(name);
  }
  const flags = [
    ...(enabled.length ? [`enable-dawn-features=${enabled.join(',')}`] : []),
    ...(disabled.length ? [`disable-dawn-features=${disabled.join(',')}`] : []),
  ];
  return { flags, enabled, disabled };
}

/** What the toggles changed in the adapter's features: a second Dawn instance is made with the other flags only. */
export async function compareFeatures(
  report: Omit<DawnTogglesReport, 'featuresWithout' | 'gained' | 'lost'>,
  baseFlags: string[],
  withToggles: AdapterReport,
  addon?: string,
): Promise<DawnTogglesReport> {
  if (report.enabled.length + report.disabled.length === 0) return report;
  const { create } = createRequire(import.meta.url)(addon ?? dawnAddonPath()) as { create(flags: string[]): GpuLike };
  const without = await describeAdapter(create(baseFlags));
  if (!without) return report;
  const before = new Set(without.features);
  const after = new Set(withToggles.features);
  return {
    ...report,
    featuresWithout: without.features,
    gained: withToggles.features.filter((f) => !before.has(f)),
    lost: without.features.filter((f) => !after.has(f)),
  };
}
