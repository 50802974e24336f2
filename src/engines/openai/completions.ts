/**
 * Raw text completion (`POST /v1/completions`): a prompt continued as it is,
 * which InfMem needs where a chat API cannot serve it (its second thinking
 * stage continues a half-written assistant turn). The body holds exactly the
 * fields InfMem's official code sends: model, prompt, max_tokens, temperature,
 * top_p. A server without that endpoint is sent the same conversation as chat
 * messages instead, and the caller is told: its own template renders them, so
 * the requests are no longer the official ones byte for byte.
 */
import { chatTurnsOf } from '../../core/infmem/chat-text';
import type { CompletionRequest, CompletionResult, RawCompleter } from '../../core/infmem/thinking';
import { ServerError } from '../errors';
import { listModels } from './connect';
import { explainFailure } from './diagnose';
import { headersFor, httpError, type OpenAIConfig } from './http';
import { DEFAULT_RETRY, type RetryNotice, type RetryPolicy, withRetries } from './retry';

export interface RawCompletionsOptions {
  fetch?: typeof fetch;
  retry?: Partial<RetryPolicy>;
  onRetry?(notice: RetryNotice): void;
  /** Told once, when the server has no raw completions and chat requests are sent instead. */
  onChatFallback?(message: string): void;
}

export interface RawCompletionsServer {
  completer: RawCompleter;
  /** The model the requests name: the one asked for, else the first the server lists. */
  model: string;
  baseUrl: string;
  /** Requests sent so far, the retries they took, and the endpoint they went to. */
  stats: { requests: number; retries: number; endpoint: 'completions' | 'chat' };
}

interface CompletionBody {
  choices?: { text?: unknown; message?: { content?: unknown } }[];
  usage?: { prompt_tokens?: unknown; completion_tokens?: unknown };
}

/** The server's models, checked once; then a completer that sends each request (retried as chat requests are). */
export async function openRawCompletions(config: OpenAIConfig, options: RawCompletionsOptions = {}): Promise<RawCompletionsServer> {
  const fetchImpl = options.fetch ?? ((input: string | URL | Request, init?: RequestInit) => fetch(input, init));
  const { baseUrl, models } = await listModels(config, fetchImpl);
  const model = config.model || models[0]?.id;
  if (!model) throw new ServerError(`${baseUrl}/models lists no model. Start the server with a model, or name one with --model.`, 404);
  if (config.model && models.length && !models.some((m) => m.id === config.model)) {
    throw new ServerError(`The server has no model "${config.model}"; it serves ${models.map((m) => m.id).join(', ')}. Name one of them with --model.`, 404);
  }
  return rawCompletions({ config, baseUrl, model }, { ...options, fetch: fetchImpl });
}

/** A completer for a server already connected to: its address and the model the requests name. */
export function rawCompletions(
  { config, baseUrl, model }: { config: OpenAIConfig; baseUrl: string; model: string },
  options: RawCompletionsOptions = {},
): RawCompletionsServer {
  const fetchImpl = options.fetch ?? ((input: string | URL | Request, init?: RequestInit) => fetch(input, init));
  const policy = { ...DEFAULT_RETRY, ...options.retry };
  const stats: RawCompletionsServer['stats'] = { requests: 0, retries: 0, endpoint: 'completions' };
  const post = async (url: string, body: string, signal?: AbortSignal) => {
    try {
      return await fetchImpl(url, { method: 'POST', headers: await headersFor(config, true), body, signal });
    } catch (error) {
      throw await explainFailure({ error, baseUrl, fetchImpl, checkCors: false });
    }
  };
  const sampling = (r: CompletionRequest) => ({ max_tokens: r.maxTokens, temperature: r.temperature, top_p: r.topP });
  const once = async (request: CompletionRequest): Promise<CompletionResult> => {
    if (stats.endpoint === 'completions') {
      const url = `${baseUrl}/completions`;
      const res = await post(url, JSON.stringify({ model, prompt: request.prompt, ...sampling(request) }), request.signal);
      if (res.status !== 404) return { ...(await resultOf(res, url, model, 'text')), endpoint: 'completions' };
      const said = (await res.text().catch(() => '')).trim().slice(0, 200);
      stats.endpoint = 'chat';
      options.onChatFallback?.(
        `${url} answered HTTP 404${said ? ` (${said})` : ''}: this server has no raw completions, so InfMem's requests go to ${baseUrl}/chat/completions as messages. The server's own chat template renders them, so they are not byte for byte what InfMem's official code sends.`,
      );
    }
    const { messages, prefix } = chatTurnsOf(request.prompt);
    // The assistant's turn already begun (an empty thought, or the thought to continue) goes last, for the server to continue.
    const turns = prefix ? [...messages, { role: 'assistant', content: prefix }] : messages;
    const url = `${baseUrl}/chat/completions`;
    const result = await resultOf(
      await post(url, JSON.stringify({ model, messages: turns, ...sampling(request), stream: false }), request.signal),
      url,
      model,
      'message',
    );
    return { ...result, endpoint: 'chat' };
  };
  const completer: RawCompleter = {
    complete: async (request) => {
      const { result, retries } = await withRetries(() => once(request), { policy, signal: request.signal, onRetry: options.onRetry });
      stats.requests++;
      stats.retries += retries;
      return result;
    },
  };
  return { completer, model, baseUrl, stats };
}

/** A reply's text and token counts; an answer that is not an OpenAI-compatible reply fails with what was missing. */
async function resultOf(res: Response, url: string, model: string, shape: 'text' | 'message'): Promise<CompletionResult> {
  if (!res.ok) throw await httpError(res, url, model);
  const json = (await res.json()) as CompletionBody;
  const choice = json.choices?.[0];
  const text = shape === 'text' ? choice?.text : choice?.message?.content;
  if (typeof text !== 'string') {
    throw new ServerError(
      `${url} answered without ${shape === 'text' ? 'choices[0].text' : 'choices[0].message.content'}: is it an OpenAI-compatible endpoint?`,
      502,
    );
  }
  const usage = json.usage ?? {};
  return {
    text,
    ...(typeof usage.prompt_tokens === 'number' && { promptTokens: usage.prompt_tokens }),
    ...(typeof usage.completion_tokens === 'number' && { completionTokens: usage.completion_tokens }),
  };
}
