import type { EngineUi } from '../types';
import { CpuEngineHint } from './CpuEngineHint';
import { LlamaModels } from './LlamaModels';
import { useSpeedMeasuredHere } from './speed';
import { WllamaSettings } from './WllamaSettings';

/** llama.cpp on the processor: the model and threads, the speed its button measures, the offer where WebGPU is missing, its models in Models. */
export const WLLAMA_UI: EngineUi = {
  Settings: WllamaSettings,
  useSpeedApart: useSpeedMeasuredHere,
  Note: CpuEngineHint,
  Models: LlamaModels,
};
