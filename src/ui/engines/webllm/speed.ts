import type { EngineConfig } from '../../../engines/engine';
import { i18n } from '../../i18n';
import { useGpu, useModels } from './models';
import type { SpeedApart } from '../types';

/** The model's calibration on this GPU, made when it was loaded in Models. */
export function useCalibratedSpeed(config: EngineConfig): SpeedApart | undefined {
  const gpu = useGpu();
  const { list } = useModels(gpu?.status === 'ok');
  // Until the model picker has filled in the config, the model is the list's default, as a run would take it.
  const id = typeof config.model === 'string' && config.model ? config.model : list?.defaultId;
  const speed = list?.models.find((m) => m.id === id)?.speed;
  return speed && { speed, where: i18n.t('estimate.calibrated') };
}
