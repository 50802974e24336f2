import { useEffect, useState } from 'react';
import { type SpeculationVerdict, modelKey } from '../../../core/estimate';
import type { EngineConfig } from '../../../engines/engine';
import { store } from '../../data';
import { i18n } from '../../i18n';

/** Whether a WebLLM configuration writes speculatively: on unless it says `speculate: false`. */
export function speculates(config: EngineConfig | undefined): boolean {
  return config?.speculate !== false;
}

/** `config` with speculative writing on (the key left out, as the engine's default) or off (`speculate: false`). */
export function withSpeculation(config: EngineConfig, on: boolean): EngineConfig {
  const { speculate: _kept, ...rest } = config;
  return on ? rest : { ...rest, speculate: false };
}

/** A check's outcome as the Models page says it. */
export function describeVerdict(verdict: SpeculationVerdict): string {
  return i18n.t(verdict.verdict === 'exact' ? 'models.speculationExact' : 'models.speculationMismatch');
}

/** A model's recorded speculation check on one device. */
export interface RecordedVerdict {
  /** The model, as `modelKey` names it. */
  modelId: string;
  adapter: string;
  speculation: SpeculationVerdict;
}

/**
 * Every speculation check kept with the measured speeds, read again whenever
 * `again` changes (the model list refreshed after a load, a run opened).
 */
export function useSpeculationVerdicts(again: unknown): readonly RecordedVerdict[] {
  const [verdicts, setVerdicts] = useState<readonly RecordedVerdict[]>([]);
  useEffect(() => {
    let alive = true;
    void store
      .then((s) => s.listSpeeds())
      .then(
        (speeds) => speeds.flatMap((s) => (s.speculation ? [{ modelId: s.modelId, adapter: s.adapter, speculation: s.speculation }] : [])),
        // The verdicts are a note beside the model: a storage error leaves them out rather than break the page.
        () => [],
      )
      .then((found) => alive && setVerdicts(found));
    return () => {
      alive = false;
    };
  }, [again]);
  return verdicts;
}

/** The mismatches recorded for the model a configuration names, on any device. */
export function mismatchesFor(verdicts: readonly RecordedVerdict[], config: EngineConfig | undefined): RecordedVerdict[] {
  const model = modelKey(config);
  return verdicts.filter((v) => v.modelId === model && v.speculation.verdict === 'mismatch');
}
