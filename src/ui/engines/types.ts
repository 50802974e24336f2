import type { EngineConfig } from '../../engines/engine';

/** The props of an engine's own settings form, shown under the Engine combobox when it is chosen. */
export interface EngineSettingsProps {
  config: EngineConfig;
  onChange(config: EngineConfig): void;
}
