import type { ComponentType } from 'react';
import { OpenAISettings } from './OpenAISettings';
import { WebLLMSettings } from './WebLLMSettings';
import { WllamaSettings } from './WllamaSettings';

import type { EngineSettingsProps } from './types';

export type { EngineSettingsProps };

/** Engine id → its settings form; engines without one need no choices. */
export const ENGINE_SETTINGS: Readonly<Record<string, ComponentType<EngineSettingsProps>>> = {
  openai: OpenAISettings,
  webllm: WebLLMSettings,
  wllama: WllamaSettings,
};
