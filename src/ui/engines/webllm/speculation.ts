import { type SpeculationVerdict, modelKey } from '../../../core/estimate';
import type { EngineConfig } from '../../../engines/engine';
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
  const said = i18n.t(verdict.verdict === 'exact' ? 'models.speculationExact' : 'models.speculationMismatch');
  // What was compared is the engine's own account, kept with the verdict.
  return verdict.compared ? `${said} (${verdict.compared})` : said;
}

/** A model's recorded speculation check on one device. */
export interface RecordedVerdict {
  /** The model, as `modelKey` names it. */
  modelId: string;
  adapter: string;
  speculation: SpeculationVerdict;
}

/** The mismatches recorded for the model a configuration names, on any device. */
export function mismatchesFor(verdicts: readonly RecordedVerdict[], config: EngineConfig | undefined): RecordedVerdict[] {
  const model = modelKey(config);
  return verdicts.filter((v) => v.modelId === model && v.speculation.verdict === 'mismatch');
}
