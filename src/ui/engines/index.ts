import type { BatchSize, BatchSizeRequest } from '../../agent/protocol';
import { needsModel } from '../../engines/infos';
import { OPENAI_UI } from './openai';
import type { EngineUi } from './types';
import { WEBLLM_UI } from './webllm';
import { WLLAMA_UI } from './wllama';

export type { EngineModelsProps, EngineNoteProps, EngineSettingsProps, EngineUi, SpeedApart } from './types';
// WebLLM asks to be offered first where a hardware GPU can run it.
export { usePreferredEngine } from './webllm/models';

/**
 * Engine id → what the page shows and asks of it, each from its own folder.
 * The Read and Evaluate forms, the estimate, the prompt set and the Models
 * page read this table and never an engine id.
 */
export const ENGINE_UI: Readonly<Record<string, EngineUi>> = {
  openai: OPENAI_UI,
  webllm: WEBLLM_UI,
  wllama: WLLAMA_UI,
};

const NONE: EngineUi = {};

/** The entry of an engine (one the table does not know has no choices), with whether it reads without a model, as the engine's info says. */
export function engineUi(engineId: string): EngineUi {
  return { ...(ENGINE_UI[engineId] ?? NONE), noModel: !needsModel(engineId) };
}

/**
 * Why the engine cannot read in this browser, or null. Every engine's check
 * runs on every render, in the table's fixed order, so that the hooks behind
 * them keep their order whichever engine is chosen.
 */
export function useEngineCannotRun(engineId: string): string | null {
  const reasons = Object.entries(ENGINE_UI).map(([id, ui]) => [id, ui.useCannotRun?.() ?? null] as const);
  return reasons.find(([id]) => id === engineId)?.[1] ?? null;
}

/**
 * How many of the form's questions the chosen engine writes together on this
 * device, where it batches there (WebLLM). Every engine's hook runs on every
 * render, in the table's fixed order, as for useEngineCannotRun.
 */
export function useEngineBatchSize(engineId: string, request: BatchSizeRequest, questions: readonly string[]): BatchSize | undefined {
  const sizes = Object.entries(ENGINE_UI).map(([id, ui]) => [id, ui.useBatchSize?.(id === engineId, request, questions)] as const);
  return sizes.find(([id]) => id === engineId)?.[1];
}
