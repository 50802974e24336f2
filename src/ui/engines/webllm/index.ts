import { i18n } from '../../i18n';
import type { EngineUi } from '../types';
import { useBatchSize } from './questions-batch';
import { cannotRunHere } from './cannot-run';
import { ModelManager } from './ModelManager';
import { useGpu } from './models';
import { useCalibratedSpeed } from './speed';
import { WebLLMSettings } from './WebLLMSettings';

/** Why WebLLM cannot read here; null while the GPU check has not answered, or where it can. */
function useCannotRun(): string | null {
  const gpu = useGpu();
  return gpu && cannotRunHere(gpu);
}

/**
 * WebLLM on this GPU: the model picker, the speed measured when a model is loaded, why it cannot run where there is no GPU,
 * how many questions go together in one batch, and its models in Models.
 */
export const WEBLLM_UI: EngineUi = {
  Settings: WebLLMSettings,
  useSpeedApart: useCalibratedSpeed,
  notMeasured: () => i18n.t('estimate.notMeasuredWebllm'),
  useCannotRun,
  useBatchSize,
  onThisGpu: true,
  Models: ModelManager,
};
