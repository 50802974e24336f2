import type { SpeculationVerdict } from '../../../core/estimate';
import type { Sampling } from '../../../core/speculative';
import type { SpeedShelf } from '../../speed-shelf';
import type { GpuSession } from '../gpu-session';
import type { ModelEntry } from '../models/models';

/** A run's speculative-writing setting, and where its self-check's verdict is kept. */
export interface SpeculationSetting {
  /** The setting "Speculative writing": false writes with WebLLM's own decoding. */
  on: boolean;
  /** The model as speed records name it (`modelKey` of the run's engine config). */
  modelKey: string;
  /** The GPU as WebGPU names it: another device checks again. */
  adapter: string;
  /** Where the verdict is kept between visits; without one it lasts as long as this worker. */
  shelf?: Pick<SpeedShelf, 'speed' | 'keepSpeculation'>;
}

/** Where the self-check runs: the window loaded for the step, the step's system message and the read's sampling. */
export interface VerdictRequest {
  window: number;
  system?: string;
  signal?: AbortSignal;
  sampling?: Sampling;
}

/** Verdicts reached in this worker, by model, device, WebLLM version and library. */
const checked = new Map<string, Promise<SpeculationVerdict | undefined>>();

/**
 * The self-check's verdict for `model` on this device with this WebLLM and
 * library: the one kept on the shelf where it was reached with both, else a
 * new check (see selfCheck). Undefined
 * where the library cannot verify drafts: then nothing is speculated and
 * nothing is kept. A mismatch is kept too, so that speculation stays off for
 * the model and the Models page can say why.
 */
export function speculationVerdict(
  gpu: GpuSession,
  model: ModelEntry,
  setting: SpeculationSetting,
  request: VerdictRequest,
): Promise<SpeculationVerdict | undefined> {
  const { window, system, signal, sampling } = request;
  const webllm = gpu.webllm.version;
  const key = [setting.modelKey, setting.adapter, webllm, model.libUrl].join('\n');
  let verdict = checked.get(key);
  if (!verdict) {
    verdict = (async () => {
      const kept = (await setting.shelf?.speed(setting.modelKey, setting.adapter))?.speculation;
      if (kept && kept.webllm === webllm && kept.library === model.libUrl) return kept;
      const outcome = await gpu.checkSpeculation(model, window, { system, signal, ...(sampling && { sampling }) });
      if (outcome === 'unsupported') return undefined;
      const found: SpeculationVerdict = { verdict: outcome.verdict, compared: outcome.compared, webllm, library: model.libUrl, checkedAt: Date.now() };
      if (outcome.verdict === 'mismatch') {
        console.warn(
          `Speculative writing is off for ${model.label}: on this GPU it differs from WebLLM's own decoding (WebLLM ${webllm}, ${model.libUrl}): ${outcome.compared}.`,
        );
      }
      await setting.shelf?.keepSpeculation(setting.modelKey, setting.adapter, found);
      return found;
    })();
    checked.set(key, verdict);
    // A check that failed or was stopped is tried again next time.
    verdict.catch(() => checked.get(key) === verdict && checked.delete(key));
  }
  return verdict;
}

/** Forgets this worker's verdicts (tests). */
export function forgetSpeculationVerdicts(): void {
  checked.clear();
}
