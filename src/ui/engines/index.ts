import { i18n } from '../i18n';
import { CpuEngineHint } from './wllama/CpuEngineHint';
import { OpenAISettings } from './openai/OpenAISettings';
import type { EngineUi } from './types';
import { useCalibratedSpeed } from './webllm/speed';
import { WebLLMSettings } from './webllm/WebLLMSettings';
import { useSpeedMeasuredHere } from './wllama/speed';
import { WllamaSettings } from './wllama/WllamaSettings';

export type { EngineNoteProps, EngineSettingsProps, EngineUi, SpeedApart } from './types';

/**
 * Engine id → what the page shows and asks of it. The Read and Evaluate forms,
 * the estimate and the prompt set read this table and never an engine id.
 */
export const ENGINE_UI: Readonly<Record<string, EngineUi>> = {
  extractive: { noModel: true },
  openai: { Settings: OpenAISettings },
  webllm: { Settings: WebLLMSettings, useSpeedApart: useCalibratedSpeed, notMeasured: () => i18n.t('estimate.notMeasuredWebllm') },
  wllama: { Settings: WllamaSettings, useSpeedApart: useSpeedMeasuredHere, Note: CpuEngineHint },
};

const NONE: EngineUi = {};

/** The entry of an engine; one the table does not know has no choices. */
export function engineUi(engineId: string): EngineUi {
  return ENGINE_UI[engineId] ?? NONE;
}
