/**
 * The part of WebLLM's MLCEngine the GPU session drives, as an interface:
 * unit tests and benchmarks put a stub or a probe in its place.
 */
import type { WebLLMAppConfig } from '../versions';

/** The slice of WebLLM's MLCEngine used here; unit tests put a stub in its place. */
export interface Mlc {
  reload(modelId: string, chatOpts?: Record<string, unknown>): Promise<void>;
  unload(): Promise<void>;
  interruptGenerate(): unknown;
  chat: { completions: { create(request: Record<string, unknown>): Promise<AsyncIterable<StreamChunk>> } };
  /** Raw completions: a prompt continued as it is, without the model's chat template. */
  completions?: { create(request: Record<string, unknown>): Promise<AsyncIterable<StreamChunk>> };
  /** MLCEngine's decode step, which a speculative request replaces for its duration. */
  decode?(pipeline: unknown, genConfig: unknown): Promise<unknown>;
}

export interface StreamChunk {
  /** A chat reply's piece is in `delta`; a raw completion's in `text`. */
  choices: { delta?: { content?: string | null }; text?: string | null; finish_reason?: string | null }[];
  usage?: {
    prompt_tokens: number;
    completion_tokens: number;
    extra?: { prefill_tokens_per_s?: number; decode_tokens_per_s?: number; time_to_first_token_s?: number };
  };
}

export type MlcFactory = (appConfig: WebLLMAppConfig, onProgress: (r: { progress: number; text: string }) => void) => Promise<Mlc>;

/** Makes WebLLM's own MLCEngine, loading its code only then. */
export const webllmFactory: MlcFactory = async (appConfig, onProgress) => {
  const { MLCEngine } = await import('@mlc-ai/web-llm');
  return new MLCEngine({ appConfig, initProgressCallback: onProgress, logLevel: 'WARN' }) as unknown as Mlc;
};
