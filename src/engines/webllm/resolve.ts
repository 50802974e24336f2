import type { Tokenizer } from '../../core/tokenizer';
import type { EngineConfig } from '../engine';
import { type ChatConfigLike, ensureConfigAndTokenizer } from './models/model-download';
import type { TokenizerConfigLike } from './models/system-message';
import { fetchTokenizerConfig } from './models/tokenizer-config';
import { checkWebGPU, type GpuCapability } from './check/webgpu';
import { loadModelTokenizer } from './models/tokenizer';
import { GpuFeatureError, WebGPUUnavailableError } from '../errors';
import { type GpuSession, session } from './gpu-session';
import { chooseModel, entryFromConfig, type ModelEntry, prebuiltModels, QWEN_CONTEXT_LIMIT } from './models/models';

export interface WebLLMDeps {
  checkGpu(): Promise<GpuCapability>;
  models(): Promise<ModelEntry[]>;
  /** mlc-chat-config.json and tokenizer.json, from WebLLM's cache or fetched into it. */
  metadata(model: ModelEntry): Promise<{ config: ChatConfigLike; tokenizer: ArrayBuffer }>;
  loadTokenizer(bytes: ArrayBuffer, name: string): Promise<Tokenizer>;
  session: GpuSession;
  /** The model's tokenizer_config.json (its own chat template), if it ships one; the system message is read from it. */
  tokenizerConfig?(model: ModelEntry): Promise<TokenizerConfigLike | undefined>;
}

export const defaultDeps: WebLLMDeps = {
  checkGpu: () => checkWebGPU(),
  models: prebuiltModels,
  metadata: (model) => ensureConfigAndTokenizer(model),
  loadTokenizer: loadModelTokenizer,
  session,
  tokenizerConfig: (model) => fetchTokenizerConfig(model.modelUrl),
};

/** The model a config names, as it will run on this GPU, with its config and tokenizer read (downloaded if needed). */
export async function resolveModel(config: EngineConfig | undefined, deps: WebLLMDeps = defaultDeps) {
  // Nothing is downloaded where the model could not run.
  const gpu = await deps.checkGpu();
  if (gpu.status !== 'ok') throw new WebGPUUnavailableError(gpu.message ?? 'WebGPU is not available.');
  const entries = await deps.models();
  const asked = entryFromConfig(config, entries);
  let model = chooseModel(asked.id, entries, gpu).entry ?? asked;
  const { config: chat, tokenizer } = await deps.metadata(model);
  if (model.needsF16 === undefined) model = { ...model, needsF16: /f16/.test(chat.quantization ?? model.id) };
  if (model.needsF16 && !gpu.shaderF16) {
    throw new GpuFeatureError(`${model.label} needs the shader-f16 GPU feature, which this GPU lacks. Use a q4f32_1 conversion of the model instead.`);
  }
  const own = chat.context_window_size && chat.context_window_size > 0 ? chat.context_window_size : QWEN_CONTEXT_LIMIT;
  const limit = model.custom ? (model.contextLimit ?? own) : own;
  return { model, chat, tokenizerBytes: tokenizer, limit, adapter: gpu.adapter };
}

const tokenizers = new Map<string, Promise<Tokenizer>>();

export function tokenizerOf(model: ModelEntry, bytes: ArrayBuffer, deps: WebLLMDeps): Promise<Tokenizer> {
  const key = model.modelUrl;
  let t = tokenizers.get(key);
  if (!t) {
    t = deps.loadTokenizer(bytes, model.id);
    t.catch(() => tokenizers.delete(key));
    tokenizers.set(key, t);
  }
  return t;
}
/** The tokenizer runs on this engine are chunked with: the model's own tokenizer.json. */
export async function webllmTokenizer(config?: EngineConfig, deps: WebLLMDeps = defaultDeps): Promise<Tokenizer> {
  const { model, tokenizerBytes } = await resolveModel(config, deps);
  return tokenizerOf(model, tokenizerBytes, deps);
}
