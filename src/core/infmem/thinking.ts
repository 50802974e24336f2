/**
 * How the official code gets one reply (`call_llm_text`): with thinking, a
 * first request of up to 1024 tokens for the thought, closed with the pinned
 * file's words when it did not close itself, then always a second request
 * continuing after the thought; without, one request.
 */
import { pyStrip } from '../pytext';
import { pyRstrip } from './py-format';

export const THINK_TOKENS = 1024;
export const REPLY_TOKENS = 1024;

/** One raw completion request: the prompt text, continued by the model. */
export interface CompletionRequest {
  prompt: string;
  maxTokens: number;
  temperature: number;
  topP: number;
  signal?: AbortSignal;
}

export interface CompletionResult {
  text: string;
  /** Tokens of the prompt and of the reply, where the server says. */
  promptTokens?: number;
  completionTokens?: number;
  /** Where a server answered it: its raw completions, or (having none) its chat endpoint. */
  endpoint?: 'completions' | 'chat';
}

/** What InfMem needs of an engine: `POST /v1/completions` or its equal, a prompt continued as it is. */
export interface RawCompleter {
  complete(request: CompletionRequest): Promise<CompletionResult>;
}

export interface ReplyOptions {
  thinking: boolean;
  /** The words closing a thought cut off at the budget, read from InfMem's file. */
  thinkClose: string;
  temperature: number;
  topP: number;
  signal?: AbortSignal;
}

export interface Reply {
  /** The reply as the official code returns it: thought and answer joined and stripped (with thinking). */
  text: string;
  /** The requests sent, in order. */
  requests: CompletionRequest[];
  completions: CompletionResult[];
}

/** The reply to a rendered prompt. A failed request fails the reply (the official code would carry on with an empty one). */
export async function replyTo(completer: RawCompleter, prompt: string, options: ReplyOptions): Promise<Reply> {
  const base = { temperature: options.temperature, topP: options.topP, ...(options.signal && { signal: options.signal }) };
  const requests: CompletionRequest[] = [];
  const completions: CompletionResult[] = [];
  const send = async (request: CompletionRequest) => {
    requests.push(request);
    const result = await completer.complete(request);
    completions.push(result);
    return result.text;
  };
  if (!options.thinking) {
    const text = await send({ prompt, maxTokens: REPLY_TOKENS, ...base });
    return { text, requests, completions };
  }
  let think = await send({ prompt, maxTokens: THINK_TOKENS, ...base });
  if (!think.includes('</think>')) think = pyRstrip(think) + options.thinkClose;
  const answer = pyStrip(await send({ prompt: prompt + think, maxTokens: Math.max(1, REPLY_TOKENS), ...base }));
  return { text: pyStrip(think + answer), requests, completions };
}
