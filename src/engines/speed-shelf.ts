import type { SpeculationVerdict, SpeedRecord } from '../core/estimate';

/**
 * Where engines keep the speeds they measure on this device, for estimates
 * made before any read. The worker hands one over its store: engines say what
 * to keep and never write storage themselves.
 */
export interface SpeedShelf {
  speeds(): Promise<SpeedRecord[]>;
  speed(modelId: string, adapter: string): Promise<SpeedRecord | undefined>;
  keepSpeed(record: SpeedRecord): Promise<void>;
  /**
   * Keeps the speculation self-check's verdict on the model's speed record
   * for this device; false where there is no such record yet (nothing kept).
   */
  keepSpeculation(modelId: string, adapter: string, verdict: SpeculationVerdict): Promise<boolean>;
}
