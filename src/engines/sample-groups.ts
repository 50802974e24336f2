/**
 * How an evaluation reads its samples on an engine: how many together, and
 * which failures end it rather than one sample.
 */
import type { BatchSender } from '../core/batch';
import { batchSender } from './batch-sender';
import type { BatchLimit, Engine } from './engine';
import {
  CorsError,
  DeviceLostError,
  EngineSettingsError,
  GpuFeatureError,
  ModelLibraryError,
  ModelLoadError,
  ServerRefusedError,
  ServerUnreachableError,
  WebGPUUnavailableError,
} from './errors';

/**
 * How many samples an engine that writes several sequences in one pass reads
 * together, and why: its batch limit for requests of `stepTokens` (one step:
 * chunk, memory, prompt and reply), not for its whole window, since no step
 * holds more. One (with no reason) for an engine that does not batch, or
 * where the size cannot be worked out.
 */
export async function sampleGroup(engine: Engine, stepTokens: number): Promise<BatchLimit> {
  if (!engine.generateBatch || !engine.batchLimit) return { size: 1, reason: '' };
  try {
    return await engine.batchLimit(Math.min(stepTokens, engine.contextWindow));
  } catch (e) {
    return { size: 1, reason: `The batch size could not be worked out (${e instanceof Error ? e.message : String(e)}), so samples are read one at a time.` };
  }
}

/** The group as a sweep takes it (eval's Together): undefined where samples are read one at a time. */
export function togetherOf(engine: Engine, group: BatchLimit): { send: BatchSender; size: number } | undefined {
  return group.size > 1 ? { send: batchSender(engine, group.size), size: group.size } : undefined;
}

/**
 * Failures of the engine itself, which every later request would meet too
 * (a lost GPU, a model that cannot load, a server that refuses the key or
 * cannot be reached): they end an evaluation, where the job host can
 * reload the GPU or say what to fix. Any other failure is one request's,
 * and fails its sample alone.
 */
export function stopsEverySample(error: unknown): boolean {
  return [
    DeviceLostError,
    WebGPUUnavailableError,
    GpuFeatureError,
    ModelLoadError,
    ModelLibraryError,
    EngineSettingsError,
    ServerRefusedError,
    ServerUnreachableError,
    CorsError,
  ].some((kind) => error instanceof kind);
}
