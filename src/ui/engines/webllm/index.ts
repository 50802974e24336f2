import { i18n } from '../../i18n';
import type { EngineUi } from '../types';
import { ModelManager } from './ModelManager';
import { useCalibratedSpeed } from './speed';
import { WebLLMSettings } from './WebLLMSettings';

/** WebLLM on this GPU: the model picker, the speed measured when a model is loaded, and its models in Models. */
export const WEBLLM_UI: EngineUi = {
  Settings: WebLLMSettings,
  useSpeedApart: useCalibratedSpeed,
  notMeasured: () => i18n.t('estimate.notMeasuredWebllm'),
  Models: ModelManager,
};
