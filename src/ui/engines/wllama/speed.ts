import { useEffect, useState, useSyncExternalStore } from 'react';
import { modelKey, type TokenSpeed } from '../../../core/estimate';
import type { EngineConfig } from '../../../engines/engine';
import { cpuDevice, effectiveThreads, SUGGESTED_MODELS, type SuggestedModel } from '../../../engines/wllama/models';
import { store } from '../../data';
import { i18n } from '../../i18n';
import type { SpeedApart } from '../types';
import { legacySpeed } from './legacy-speed';
import { sharedMemory } from '../../../engines/shared-memory';

export function threadsFor(config: EngineConfig): number {
  const asked = Number(config.threads);
  return effectiveThreads(Number.isFinite(asked) && asked > 0 ? asked : undefined, navigator.hardwareConcurrency, sharedMemory());
}

// A measurement made on this page has every reader look again.
let measurements = 0;
const listeners = new Set<() => void>();

/** Says that the worker has stored a new measurement. */
export function speedMeasured(): void {
  measurements++;
  listeners.forEach((l) => l());
}

function subscribe(listener: () => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

/** The speed measured for this configuration's model with its thread count on this device, if any. */
export function useMeasuredSpeed(config: EngineConfig): TokenSpeed | undefined {
  const model = modelKey(config);
  const threads = threadsFor(config);
  const key = `${model}|${threads}`;
  const measured = useSyncExternalStore(subscribe, () => measurements);
  const [found, setFound] = useState<{ key: string; speed: TokenSpeed | undefined } | null>(null);
  useEffect(() => {
    let alive = true;
    void store
      .then((s) => s.getSpeed(model, cpuDevice(threads)))
      .catch(() => undefined) // a speed that cannot be read is measured again
      .then((record) => {
        const speed = record
          ? { prefillTokensPerSecond: record.prefillTokensPerSecond, decodeTokensPerSecond: record.decodeTokensPerSecond }
          : legacySpeed(globalThis.localStorage, model, threads);
        if (alive) setFound({ key, speed });
      });
    return () => {
      alive = false;
    };
  }, [key, model, threads, measured]);
  return found?.key === key ? found.speed : undefined;
}

/** The speed "Load model and measure speed" measured for this model and thread count on this device. */
export function useSpeedMeasuredHere(config: EngineConfig): SpeedApart | undefined {
  const speed = useMeasuredSpeed(config);
  return speed && { speed, where: i18n.t('estimate.measuredThreads', { count: threadsFor(config) }) };
}

export function suggestionFor(config: EngineConfig): SuggestedModel | undefined {
  return config.localModel ? undefined : SUGGESTED_MODELS.find((m) => m.url === config.modelUrl);
}
