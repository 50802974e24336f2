import { useSyncExternalStore } from 'react';
import type { EngineConfig } from '../../../engines/engine';
import { effectiveThreads, type SpeedSample, SUGGESTED_MODELS, type SuggestedModel } from '../../../engines/wllama/models';
import { i18n } from '../../i18n';
import type { SpeedApart } from '../types';

/** Speeds measured with "Load model and measure speed", per model and thread count, kept between visits. */
const KEY = 'memagent-wllama-speed';
const listeners = new Set<() => void>();
let cache: Record<string, SpeedSample> | null = null;

function all(): Record<string, SpeedSample> {
  if (!cache) {
    try {
      cache = (JSON.parse(localStorage.getItem(KEY) ?? 'null') as Record<string, SpeedSample> | null) ?? {};
    } catch {
      cache = {};
    }
  }
  return cache;
}

/** The model a configuration names: a picked file's key, or its URL. */
export function modelKey(config: EngineConfig): string {
  return String(config.localModel || config.modelUrl || '');
}

export function threadsFor(config: EngineConfig): number {
  const asked = Number(config.threads);
  return effectiveThreads(Number.isFinite(asked) && asked > 0 ? asked : undefined, navigator.hardwareConcurrency, globalThis.crossOriginIsolated === true);
}

export function saveSpeed(config: EngineConfig, sample: SpeedSample): void {
  cache = { ...all(), [`${modelKey(config)}|${sample.threads}`]: sample };
  localStorage.setItem(KEY, JSON.stringify(cache));
  listeners.forEach((l) => l());
}

function subscribe(listener: () => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

/** The measured speed for this configuration, if any. */
export function useMeasuredSpeed(config: EngineConfig): SpeedSample | undefined {
  const speeds = useSyncExternalStore(subscribe, all);
  return speeds[`${modelKey(config)}|${threadsFor(config)}`];
}

/** The speed "Load model and measure speed" measured for this model and thread count on this device. */
export function useSpeedMeasuredHere(config: EngineConfig): SpeedApart | undefined {
  const cpu = useMeasuredSpeed(config);
  return cpu?.measured ? { speed: cpu, where: i18n.t('estimate.measuredThreads', { count: cpu.threads }) } : undefined;
}

export function suggestionFor(config: EngineConfig): SuggestedModel | undefined {
  return config.localModel ? undefined : SUGGESTED_MODELS.find((m) => m.url === config.modelUrl);
}
