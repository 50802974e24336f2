import type { ComponentType } from 'react';
import type { EngineConfig } from '../../engines/engine';
import { OpenAISettings } from './OpenAISettings';
import { WebLLMSettings } from './WebLLMSettings';
import { WllamaSettings } from './WllamaSettings';

/** The props of an engine's own settings form, shown under the Engine combobox when it is chosen. */
export interface EngineSettingsProps {
  config: EngineConfig;
  onChange(config: EngineConfig): void;
}

/** Engine id → its settings form; engines without one need no choices. */
export const ENGINE_SETTINGS: Readonly<Record<string, ComponentType<EngineSettingsProps>>> = {
  openai: OpenAISettings,
  webllm: WebLLMSettings,
  wllama: WllamaSettings,
};
