import type { EngineUi } from '../types';
import { OpenAISettings } from './OpenAISettings';
import { requestsAtOnceProblem } from './requests-at-once';

/** An OpenAI-compatible server: its address, model, key and requests at once; its speed shows in past reads only. */
export const OPENAI_UI: EngineUi = { Settings: OpenAISettings, configProblem: requestsAtOnceProblem };
