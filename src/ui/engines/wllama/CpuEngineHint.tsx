import { useTranslation } from 'react-i18next';
import { estimateRead, readSize } from '../../../core/estimate';
import { guessSpeed, SUGGESTED_MODELS, WLLAMA_ENGINE_ID, WLLAMA_INFO } from '../../../engines/wllama/models';
import { formatDuration, formatNumber } from '../../format';
import { engineText } from '../../i18n';
import { useGpu } from '../webllm/models';
import type { EngineNoteProps } from '../types';
import { suggestionFor, threadsFor, useMeasuredSpeed } from './speed';

const SAMPLE_BOOK_TOKENS = 100_000;

/**
 * Where WebGPU is missing (or only a software GPU exists), offers the CPU
 * engine beside an engine that needs the GPU; when it is chosen, says how long a read would take and how that
 * figure was reached: measured on this device, or guessed from the model size.
 */
export function CpuEngineHint({ engineId, config, document, books, settings, chosenOnGpu, onChoose }: EngineNoteProps) {
  const { t } = useTranslation();
  const gpu = useGpu();
  const chosen = engineId === WLLAMA_ENGINE_ID;
  const noGpu = gpu !== null && (gpu.status !== 'ok' || gpu.fallback);
  const effective = chosen && (config.modelUrl || config.localModel) ? config : { modelUrl: SUGGESTED_MODELS[0]!.url };
  const measured = useMeasuredSpeed(effective);
  // Offered only where it helps: beside an engine whose model needs this device's GPU, when there is none to use.
  if (!chosen && (!noGpu || !chosenOnGpu)) return null;

  const threads = threadsFor(effective);
  const model = suggestionFor(effective);
  const speed = measured ?? (model ? guessSpeed(model.bytes, threads) : undefined);
  const name = model?.label ?? String(effective.localModelName ?? t('cpu.thisModel'));
  const engine = engineText(WLLAMA_ENGINE_ID, 'label', WLLAMA_INFO.label);
  let estimate: string;
  // One line says what matters; the disclosure holds how the figure was reached.
  let brief: string;
  if (!speed) {
    estimate = t('cpu.unknown', { name });
    brief = t('cpu.unknownBrief', { name });
  } else {
    const bookTokens = document?.tokens ?? SAMPLE_BOOK_TOKENS;
    const chunkTokens = settings.chunkTokens > 0 ? settings.chunkTokens : 5000;
    const memoryTokens = settings.memoryTokens > 0 ? settings.memoryTokens : 1024;
    // Each step counted as writing a full memory: an upper bound. The chunks are the Read form's estimate's, and one more step answers.
    const { chunks, promptTokens } = readSize(books.length ? books.map((b) => b.tokens) : bookTokens, chunkTokens, memoryTokens);
    const totalMs = estimateRead({ chunks, promptTokens, memoryTokens, steps: [], speed })?.totalMs ?? 0;
    const tokens = formatNumber(bookTokens);
    const what = document ? t('cpu.thisBook', { tokens }) : t('cpu.aBook', { tokens });
    const how = measured ? t('estimate.measuredThreads', { count: threads }) : t('cpu.guess', { count: threads });
    const duration = formatDuration(totalMs);
    estimate = t('cpu.estimate', {
      name,
      what,
      duration,
      chunks: formatNumber(chunks),
      tokens: promptTokens,
      read: Math.round(speed.prefillTokensPerSecond),
      memory: memoryTokens,
      write: formatNumber(speed.decodeTokensPerSecond, 1),
      how,
    });
    brief = t(measured ? 'cpu.brief' : 'cpu.briefGuess', { book: document ? t('cpu.briefThisBook') : t('cpu.briefABook', { tokens }), duration, name });
  }
  return (
    <div role="note" aria-label={t('cpu.region')} className="hint">
      {noGpu && !chosen && (
        <>
          <p>{t('cpu.noGpu', { engine })}</p>
          <button type="button" onClick={() => onChoose(WLLAMA_ENGINE_ID)}>
            {t('cpu.use', { engine })}
          </button>
          <details>
            <summary>{t('cpu.why')}</summary>
            <p>
              {t('cpu.whyText', { engine })} {estimate}
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
