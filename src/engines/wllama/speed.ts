import { modelKey, type SpeedRecord } from '../../core/estimate';
import type { EngineConfig } from '../engine';
import type { SpeedShelf } from '../speed-shelf';
import { measureModel } from './engine';
import type { LoadProgress } from './host';
import { cpuDevice } from './models';

/**
 * Loads the configured model (downloading it once), measures its speed on
 * this device and keeps it on the shelf the worker hands it (with every
 * engine's measured speeds), under the model's key and the thread count it ran
 * with: the page reads it from there for its estimates and the Models list.
 */
export async function measureWllama(
  speeds: Pick<SpeedShelf, 'keepSpeed'>,
  config: EngineConfig,
  onProgress?: (p: LoadProgress) => void,
  measure: typeof measureModel = measureModel,
): Promise<SpeedRecord> {
  const { threads, ...speed } = await measure(config, onProgress);
  const record: SpeedRecord = { ...speed, modelId: modelKey(config), adapter: cpuDevice(threads), measuredAt: Date.now() };
  await speeds.keepSpeed(record);
  return record;
}
