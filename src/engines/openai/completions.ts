/**
 * Raw text completion (`POST /v1/completions`): a prompt continued as it is,
 * which InfMem needs where a chat API cannot serve it (its second thinking
 * stage continues a half-written assistant turn). The body holds exactly the
 * fields InfMem's official code sends: model, prompt, max_tokens, temperature,
 * top_p.
 */
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
}

export interface RawCompletionsServer {
  completer: RawCompleter;
  /** The model the requests name: the one asked for, else the first the server lists. */
  model: string;
  baseUrl: string;
  /** Requests sent so far, and the retries they took. */
  stats: { requests: number; retries: number };
}

interface CompletionBody {
  choices?: { text?: unknown }[];
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
  const url = `${baseUrl}/completions`;
  const policy = { ...DEFAULT_RETRY, ...options.retry };
  const stats = { requests: 0, retries: 0 };
  const once = async (request: CompletionRequest): Promise<CompletionResult> => {
    const body = JSON.stringify({ model, prompt: request.prompt, max_tokens: request.maxTokens, temperature: request.temperature, top_p: request.topP });
    let res: Response;
    try {
      res = await fetchImpl(url, { method: 'POST', headers: await headersFor(config, true), body, signal: request.signal });
    } catch (error) {
      throw await explainFailure({ error, baseUrl, fetchImpl, checkCors: false });
    }
    if (res.status === 404) {
      const said = (await res.text().catch(() => '')).trim().slice(0, 200);
      throw new ServerError(
        `${url} answered HTTP 404${said ? ` (${said})` : ''}: InfMem needs a server that answers raw completions at /v1/completions, as vLLM does.`,
        404,
      );
    }
    if (!res.ok) throw await httpError(res, url, model);
    const json = (await res.json()) as CompletionBody;
    const text = json.choices?.[0]?.text;
    if (typeof text !== 'string') throw new ServerError(`${url} answered without choices[0].text: is it an OpenAI-compatible completions endpoint?`, 502);
    const usage = json.usage ?? {};
    return {
      text,
      ...(typeof usage.prompt_tokens === 'number' && { promptTokens: usage.prompt_tokens }),
      ...(typeof usage.completion_tokens === 'number' && { completionTokens: usage.completion_tokens }),
    };
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
