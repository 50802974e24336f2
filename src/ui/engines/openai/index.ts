import type { EngineUi } from '../types';
import { OpenAISettings } from './OpenAISettings';

/** An OpenAI-compatible server: its address, model and key; its speed shows in past reads only. */
export const OPENAI_UI: EngineUi = { Settings: OpenAISettings };
