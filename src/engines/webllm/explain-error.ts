import { ContextWindowShortError, errorNamed } from '../errors';
import type { ModelEntry } from './models/models';
import { ModelDownloadError } from './models/model-download';
import { SHIPPED_WEBLLM, type WebLLMVersion } from './versions';

/** Where an error happened: loading or writing, in which window, with which WebLLM. */
export interface ErrorContext {
  phase: 'load' | 'generate';
  /** The context window loaded (or being loaded). */
  window?: number;
  webllm?: WebLLMVersion;
}

/**
 * WebLLM's errors (matched by name: they are not exported) as messages that
 * say what to do next, each as the app's class of that name where it has
 * one. The app's own errors, already worded so, pass through.
 */
export function explainError(e: unknown, model: ModelEntry, context: ErrorContext): Error {
  const { phase, window, webllm = SHIPPED_WEBLLM } = context;
  if (!(e instanceof Error)) return new Error(String(e));
  if (e instanceof ContextWindowShortError || e instanceof ModelDownloadError) return e;
  const detail = e.message.split('\n')[0];
  switch (e.name) {
    case 'AbortError':
    case 'WebGPUUnavailableError': // the app's class, or an error given its name where WebGPU was found missing
      return e;
    case 'WebGPUNotAvailableError':
    case 'WebGPUNotFoundError':
      return errorNamed('WebGPUUnavailableError', 'WebGPU stopped being available to this page. Reload the page; if it persists, choose another engine.');
    case 'ShaderF16SupportError':
    case 'FeatureSupportError':
      return errorNamed(e.name, `${model.label} needs the shader-f16 GPU feature, which this GPU lacks. Choose the q4f32_1 build of the model instead.`);
    case 'DeviceLostError':
    case 'ModelNotLoadedError':
      return errorNamed(
        'DeviceLostError',
        'The GPU stopped responding (device lost), most often because it ran out of memory. Close other tabs that use the GPU, or choose a smaller model or chunk size.',
      );
    case 'ContextWindowSizeExceededError':
      return errorNamed(
        e.name,
        `This step's prompt does not fit in the ${window ?? ''}-token context window the model was loaded with (${detail}). Choose a smaller chunk size or memory size and start the run again.`,
      );
    case 'QuotaExceededError':
      return new ModelDownloadError(
        'There is not enough storage for this model. Choose a smaller model, or delete models you no longer need, then try again.',
        'quota',
      );
  }
  if (
    phase === 'load' &&
    (/^(CompileError|LinkError|RuntimeError)$/.test(e.name) || /WebAssembly|wasm|Cannot find function|not a function/i.test(detail ?? ''))
  ) {
    return errorNamed(
      'ModelLibraryError',
      `The model library ${model.libUrl} could not be loaded (${e.name}: ${detail}). It must be a WebLLM model library (.wasm) built for this model and for WebLLM ${webllm.version} (mlc-ai/binary-mlc-llm-libs, ${webllm.libraryFolder}); ` +
        'a converted RL-MemAgent-7B uses the Qwen2-7B-Instruct library of the same quantisation. Check the model library URL in Models.',
    );
  }
  if (/device.*lost|lost.*device/i.test(detail ?? '')) return explainError(errorNamed('DeviceLostError', detail ?? ''), model, context);
  if (e.name === 'TypeError' && /fetch|network/i.test(detail ?? '')) {
    return new ModelDownloadError(`A model file could not be fetched (${detail}). Check the network, or download the model in Models first.`, 'network');
  }
  return errorNamed(e.name, `WebLLM ${phase === 'load' ? 'could not load the model' : 'failed while writing'}: ${detail}`);
}
