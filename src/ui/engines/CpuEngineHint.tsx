import type { EngineConfig } from '../../engines/engine';
import { estimateReadSeconds, guessSpeed, SUGGESTED_MODELS, WLLAMA_ENGINE_ID, WLLAMA_INFO } from '../../engines/wllama-models';
import type { DocumentRecord } from '../../storage/db';
import { formatDuration } from '../format';
import type { ReadSettings } from '../settings';
import { useGpu } from './models';
import { suggestionFor, threadsFor, useMeasuredSpeed } from './wllama-speed';

interface Props {
  engineId: string;
  /** The llama.cpp engine's configuration as its settings form holds it. */
  config: EngineConfig;
  document: DocumentRecord | null;
  settings: Pick<ReadSettings, 'chunkTokens' | 'memoryTokens'>;
  onChoose(engineId: string): void;
}

const SAMPLE_BOOK_TOKENS = 100_000;

/**
 * Where WebGPU is missing (or only a software GPU exists), offers the CPU
 * engine; when it is chosen, says how long a read would take and how that
 * figure was reached: measured on this device, or guessed from the model size.
 */
export function CpuEngineHint({ engineId, config, document, settings, onChoose }: Props) {
  const gpu = useGpu();
  const chosen = engineId === WLLAMA_ENGINE_ID;
  const noGpu = gpu !== null && (gpu.status !== 'ok' || gpu.fallback);
  const effective = chosen && (config.modelUrl || config.localModel) ? config : { modelUrl: SUGGESTED_MODELS[0]!.url };
  const measured = useMeasuredSpeed(effective);
  if (!chosen && !noGpu) return null;

  const threads = threadsFor(effective);
  const model = suggestionFor(effective);
  const speed = measured ?? (model ? guessSpeed(model.bytes, threads) : undefined);
  const name = model?.label ?? String(effective.localModelName ?? 'this model');
  let estimate: string;
  // One line says what matters; the disclosure holds how the figure was reached.
  let brief: string;
  if (!speed) {
    estimate = `Its speed with ${name} is not known yet: press “Load model and measure speed”.`;
    brief = `Speed with ${name}: not measured yet.`;
  } else {
    const bookTokens = document?.tokens ?? SAMPLE_BOOK_TOKENS;
    const chunkTokens = settings.chunkTokens > 0 ? settings.chunkTokens : 5000;
    const memoryTokens = settings.memoryTokens > 0 ? settings.memoryTokens : 1024;
    const { steps, seconds } = estimateReadSeconds({ bookTokens, chunkTokens, memoryTokens, speed });
    const what = document ? `this book (${bookTokens.toLocaleString('en')} tokens)` : `a ${bookTokens.toLocaleString('en')}-token book`;
    const how = speed.measured
      ? `measured on this device with ${speed.threads} thread${speed.threads === 1 ? '' : 's'}`
      : `a rough guess from the model's size and ${threads} thread${threads === 1 ? '' : 's'}, not a measurement: press “Load model and measure speed” for a real figure`;
    estimate =
      `With ${name}, reading ${what} takes at most about ${formatDuration(seconds * 1000)}: ${steps} steps, each reading up to ` +
      `${chunkTokens + memoryTokens} tokens at ${Math.round(speed.prefillTokensPerSecond)} tokens/s and writing up to ${memoryTokens} at ` +
      `${speed.decodeTokensPerSecond.toFixed(1)} tokens/s (${how}).`;
    brief = `${document ? 'This book' : `A ${bookTokens.toLocaleString('en')}-token book`} takes at most about ${formatDuration(seconds * 1000)} with ${name}${speed.measured ? '' : ' (a rough guess)'}.`;
  }
  return (
    <div role="note" aria-label="CPU engine" className="hint">
      {noGpu && !chosen && (
        <>
          <p>No usable WebGPU here: {WLLAMA_INFO.label} runs a small model on the processor instead.</p>
          <button type="button" onClick={() => onChoose(WLLAMA_ENGINE_ID)}>
            Use {WLLAMA_INFO.label}
          </button>
          <details>
            <summary>Why, and how long it takes</summary>
            <p>
              This browser has no usable WebGPU, so models that need a graphics card cannot run well here. {WLLAMA_INFO.label} runs a small
              model on the processor instead. {estimate}
            </p>
          </details>
        </>
      )}
      {chosen && (
        <details>
          <summary>{brief}</summary>
          <p>{estimate}</p>
        </details>
      )}
    </div>
  );
}
