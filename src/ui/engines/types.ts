import type { ComponentType } from 'react';
import type { BatchSize, BatchSizeRequest } from '../../agent/protocol';
import type { TokenSpeed } from '../../core/estimate';
import type { EngineConfig } from '../../engines/engine';
import type { DocumentRecord } from '../data';
import type { ReadFormSettings } from '../settings';

/** The props of an engine's own settings form, shown under the Engine combobox when it is chosen. */
export interface EngineSettingsProps {
  config: EngineConfig;
  onChange(config: EngineConfig): void;
}

/** A speed measured apart from any read, and where it was measured, in words. */
export interface SpeedApart {
  speed: TokenSpeed;
  where: string;
}

/** The props of a note an engine shows beside the engine choice, whichever engine is chosen. */
export interface EngineNoteProps {
  /** The engine chosen now. */
  engineId: string;
  /** This engine's own configuration, as its settings form holds it (empty until it is chosen once). */
  config: EngineConfig;
  /** The books to read, as one record (a set's sizes added up). */
  document: DocumentRecord | null;
  /** The books themselves: a set's books are each cut on their own. */
  books: readonly DocumentRecord[];
  settings: Pick<ReadFormSettings, 'chunkTokens' | 'memoryTokens'>;
  /** Whether the chosen engine runs its model on this device's GPU (an offer of a CPU engine helps only there). */
  chosenOnGpu: boolean;
  onChoose(engineId: string): void;
}

/** The props of an engine's section of the Models page. */
export interface EngineModelsProps {
  /** Whether the Models page is shown: a section reads what is stored again when it is. */
  active: boolean;
}

/** What the page knows of one engine: everything engine-specific that generic forms ask of it. */
export interface EngineUi {
  /** Its settings form; an engine without one needs no choices. */
  Settings?: ComponentType<EngineSettingsProps>;
  /** What is wrong with a configuration its form holds, in the page's language (Read and Start refuse it); null when nothing is. */
  configProblem?(config: EngineConfig): string | null;
  /** Its speed measured apart from any read (a calibration, a measure button): a hook, called while it is chosen. */
  useSpeedApart?(config: EngineConfig): SpeedApart | undefined;
  /** What the estimate says while this engine's speed is not measured, in the page's language. */
  notMeasured?(): string;
  /** A note beside the engine choice, shown whichever engine is chosen (an offer to use this one instead). */
  Note?: ComponentType<EngineNoteProps>;
  /** Why it cannot read in this browser (no usable GPU), or null where it can or while that is being checked: a hook, called on every render. */
  useCannotRun?(): string | null;
  /**
   * How many of the form's questions it writes together on this device, and why (see AgentApi.batchSize): a hook,
   * called on every render, `active` while this engine is chosen; undefined while there is nothing to say.
   */
  useBatchSize?(active: boolean, request: BatchSizeRequest, questions: readonly string[]): BatchSize | undefined;
  /** Runs its model on this device's GPU. */
  onThisGpu?: boolean;
  /** Its section of the Models page: the models it keeps in this browser, with their measured speeds. */
  Models?: ComponentType<EngineModelsProps>;
  /** Reads with a heuristic and no model: it takes no model and no prompt set (set by engineUi from the engine's info). */
  noModel?: boolean;
}
