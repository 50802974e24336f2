import { retryAfterMs } from '../../core/abort';
import type { EngineConfig } from '../engine';
import { EngineSettingsError, ServerError, ServerRefusedError } from '../errors';
import { isRequestsAtOnce, REQUESTS_AT_ONCE } from './info';

/** Where the key comes from: the text itself, or a lookup made at each request (so a changed key takes effect at once). */
export type ApiKeySource = string | (() => string | undefined | Promise<string | undefined>);

export interface OpenAIConfig {
  /** The server's OpenAI base URL, e.g. http://127.0.0.1:8000/v1. */
  baseUrl: string;
  /** Served model name; empty or absent: the first model the server lists. */
  model?: string;
  apiKey?: ApiKeySource;
  /** Tokens one request may hold; the server's own figure wins where it is smaller or the only one. */
  contextWindow?: number;
  /** The most requests in flight at once when several questions are read together; absent: REQUESTS_AT_ONCE.default. */
  requestsAtOnce?: number;
}

/** A run's stored config (no secrets) and a key from elsewhere → what the engine needs; refuses a config without an address. */
export function openAIConfig(config: EngineConfig | undefined, apiKey?: ApiKeySource): OpenAIConfig {
  const baseUrl = typeof config?.baseUrl === 'string' ? config.baseUrl.trim() : '';
  if (!baseUrl) {
    throw new EngineSettingsError('Enter the address of the server under Base URL (for example http://127.0.0.1:8000/v1), then press Connect.');
  }
  const out: OpenAIConfig = { baseUrl };
  if (typeof config?.model === 'string' && config.model.trim()) out.model = config.model.trim();
  const window = Number(config?.contextWindow);
  if (Number.isInteger(window) && window > 0) out.contextWindow = window;
  const atOnce = config?.requestsAtOnce;
  if (atOnce !== undefined) {
    // A bound that cannot be used is refused, not replaced: the person asked for a number and should know it was not taken.
    if (!isRequestsAtOnce(atOnce)) {
      throw new EngineSettingsError(
        `Requests in flight at once must be a whole number from ${REQUESTS_AT_ONCE.min} to ${REQUESTS_AT_ONCE.max}, not ${JSON.stringify(atOnce)}.`,
      );
    }
    out.requestsAtOnce = atOnce;
  }
  if (apiKey !== undefined) out.apiKey = apiKey;
  return out;
}

export function normalizeBaseUrl(input: string): string {
  const text = input.trim().replace(/\/+$/, '');
  let url: URL;
  try {
    url = new URL(text);
  } catch (e) {
    throw new EngineSettingsError(`"${input}" is not a server address. Enter one like http://127.0.0.1:8000/v1.`, { cause: e });
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new EngineSettingsError(`"${input}" is not an http:// or https:// address. Enter one like http://127.0.0.1:8000/v1.`);
  }
  return text;
}

/** vLLM serves /tokenize beside /v1, not under it. */
export function serverRoot(baseUrl: string): string {
  return baseUrl.replace(/\/v1$/, '');
}

async function resolveKey(source: ApiKeySource | undefined): Promise<string | undefined> {
  const key = typeof source === 'function' ? await source() : source;
  return key?.trim() || undefined;
}

export async function headersFor(config: OpenAIConfig, json: boolean): Promise<Record<string, string>> {
  const headers: Record<string, string> = {};
  if (json) headers['Content-Type'] = 'application/json';
  const key = await resolveKey(config.apiKey);
  if (key) headers.Authorization = `Bearer ${key}`;
  return headers;
}

export function positiveInt(x: unknown): number | undefined {
  return typeof x === 'number' && Number.isInteger(x) && x > 0 ? x : undefined;
}

/** The server's own words from an error body (OpenAI, vLLM and llama.cpp shapes), else the start of the body. */
async function errorText(res: Response): Promise<string> {
  // A body that cannot be read leaves the status text to speak for it.
  const body = await res.text().catch(() => '');
  try {
    const json = JSON.parse(body) as { error?: { message?: string } | string; message?: string; detail?: string };
    const message = typeof json.error === 'string' ? json.error : (json.error?.message ?? json.message ?? json.detail);
    if (message) return message;
  } catch {
    // not JSON: fall through
  }
  return body.trim().slice(0, 300) || res.statusText;
}

/** Statuses worth asking again for; an error inside a stream that names no status is the server failing mid-reply, also worth another try. */
export function isRetryableStatus(status: number | undefined): boolean {
  return status === undefined || status === 408 || status === 409 || status === 425 || status === 429 || status >= 500;
}

/** A failed HTTP answer as an error that says what to do, keeping the server's status and its Retry-After. */
export async function httpError(res: Response, url: string, model?: string): Promise<ServerError> {
  const said = await errorText(res);
  const status = res.status;
  const retryAfter = retryAfterMs(res.headers.get('retry-after'));
  if (status === 401 || status === 403) {
    return new ServerRefusedError(
      `The server refused the API key (HTTP ${status}: ${said}). Enter the key the server was started with (vLLM's --api-key), then Connect again.`,
      status,
      retryAfter,
    );
  }
  let message: string;
  if (status === 404) {
    message = model
      ? `The server has no model "${model}" or no such endpoint (HTTP 404 from ${url}: ${said}). Check the model name and that the base URL ends in /v1.`
      : `Nothing answers at ${url} (HTTP 404: ${said}). Check that the base URL ends in /v1.`;
  } else if (status === 429) {
    message = `The server is busy (HTTP 429: ${said}).`;
  } else {
    message = `The server answered HTTP ${status}: ${said}`;
  }
  return new ServerError(message, status, retryAfter);
}
