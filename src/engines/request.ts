import type { ChatMessage, GenerateOptions } from '../core/generation';

/**
 * One step's request, and how each runtime is told it. Every engine sends the
 * same messages, the same reply cap, temperature, top p and seed, and neutral
 * sampling otherwise, as the paper's evaluation had it (vLLM without the
 * model's generation config): no repetition, presence or frequency penalty,
 * no top-k, no min-p. Runtimes that would apply their own defaults (WebLLM's
 * repetition penalty 1.05 from mlc-chat-config.json, llama.cpp's top-k 40 and
 * min-p 0.05, a server's generation_config.json) are told so explicitly.
 */
export interface StepRequest {
  messages: ChatMessage[];
  maxTokens: number;
  temperature?: number;
  topP?: number;
  seed?: number;
}

/** The neutral values, named once. */
export const NEUTRAL_SAMPLING = Object.freeze({
  repetitionPenalty: 1,
  presencePenalty: 0,
  frequencyPenalty: 0,
  minP: 0,
  /** Top-k off: vLLM and SGLang spell it -1 (older vLLM refuses 0); llama.cpp reads any k ≤ 0 as off. */
  topKOffServer: -1,
  topKOffLlamaCpp: 0,
});

/** The request for `messages`, with `system` (if any) as the first message. */
export function stepRequest(messages: readonly ChatMessage[], options: GenerateOptions, system?: string): StepRequest {
  const all = messages.map((m) => ({ role: m.role, content: m.content }));
  const step: StepRequest = {
    messages: system !== undefined && all[0]?.role !== 'system' ? [{ role: 'system', content: system }, ...all] : all,
    maxTokens: options.maxTokens,
  };
  if (options.temperature !== undefined) step.temperature = options.temperature;
  if (options.topP !== undefined) step.topP = options.topP;
  if (options.seed !== undefined && options.seed !== null) step.seed = options.seed;
  return step;
}

function sampling(step: StepRequest): Record<string, number> {
  const out: Record<string, number> = { max_tokens: step.maxTokens };
  if (step.temperature !== undefined) out.temperature = step.temperature;
  if (step.topP !== undefined) out.top_p = step.topP;
  if (step.seed !== undefined) out.seed = step.seed;
  return out;
}

/**
 * An OpenAI-compatible server's body. `repetition_penalty`, `top_k` and
 * `min_p` are vLLM's and SGLang's names; llama.cpp's server reads
 * `repeat_penalty`; servers ignore the names they do not know.
 */
export function openAIBody(step: StepRequest, model: string): Record<string, unknown> {
  return {
    model,
    messages: step.messages,
    ...sampling(step),
    presence_penalty: NEUTRAL_SAMPLING.presencePenalty,
    frequency_penalty: NEUTRAL_SAMPLING.frequencyPenalty,
    repetition_penalty: NEUTRAL_SAMPLING.repetitionPenalty,
    repeat_penalty: NEUTRAL_SAMPLING.repetitionPenalty,
    top_k: NEUTRAL_SAMPLING.topKOffServer,
    min_p: NEUTRAL_SAMPLING.minP,
    stream: true,
    stream_options: { include_usage: true },
  };
}

/** WebLLM's request. Its sampler has no top-k or min-p; its repetition penalty defaults to the model config's. */
export function webllmRequest(step: StepRequest): Record<string, unknown> {
  return { messages: step.messages, ...webllmSampling(step) };
}

/** WebLLM's sampling for a request: what a step asks, penalties neutral, streamed with its usage. */
export function webllmSampling(step: Omit<StepRequest, 'messages'>): Record<string, unknown> {
  return {
    ...sampling({ ...step, messages: [] }), // max_tokens always: WebLLM's default is unlimited
    presence_penalty: NEUTRAL_SAMPLING.presencePenalty,
    frequency_penalty: NEUTRAL_SAMPLING.frequencyPenalty,
    repetition_penalty: NEUTRAL_SAMPLING.repetitionPenalty,
    stream: true,
    stream_options: { include_usage: true },
  };
}

/**
 * llama.cpp's completion parameters (wllama passes them to llama.cpp's server
 * code). Besides its own defaults, a GGUF may carry sampling defaults of its
 * own (general.sampling.*): each is set here.
 */
export function llamaCppParams(step: StepRequest): Record<string, unknown> & { messages: ChatMessage[]; max_tokens: number } {
  return { messages: step.messages, ...llamaCppSampling(step) };
}

/** llama.cpp's sampling for a request: what a step asks, every other sampler set neutral. */
export function llamaCppSampling(step: Omit<StepRequest, 'messages'>): Record<string, unknown> & { max_tokens: number } {
  return {
    ...sampling({ ...step, messages: [] }),
    max_tokens: step.maxTokens,
    top_k: NEUTRAL_SAMPLING.topKOffLlamaCpp,
    min_p: NEUTRAL_SAMPLING.minP,
    repeat_penalty: NEUTRAL_SAMPLING.repetitionPenalty,
    presence_penalty: NEUTRAL_SAMPLING.presencePenalty,
    frequency_penalty: NEUTRAL_SAMPLING.frequencyPenalty,
    xtc_probability: 0,
    mirostat: 0,
  };
}
