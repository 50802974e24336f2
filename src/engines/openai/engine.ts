import { abortError, type ChatMessage, type FinishReason, type GenerateOptions, type GenerateResult, isAbortError, type Usage } from '../../core/generation';
import { retryAfterMs, sleep } from '../../core/abort';
import type { Tokenizer } from '../../core/tokenizer';
import type { Engine, EngineConfig, EngineInfo } from '../engine';
import { openAIBody, stepRequest } from '../request';

/**
 * Any server that speaks the OpenAI chat-completions protocol (vLLM, SGLang,
 * llama.cpp's llama-server, Ollama): the same memory loop, one HTTP request per
 * chunk, streamed over server-sent events. Uses only `fetch`, so it runs in the
 * app's worker and in node alike.
 */

export const OPENAI_INFO: EngineInfo = {
  id: 'openai',
  label: 'OpenAI-compatible server',
  description: 'A model served over HTTP by vLLM, SGLang, llama.cpp or Ollama, on this machine or another. Enter its address and press Connect.',
};

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
}

export interface RetryPolicy {
  /** Failed attempts retried before the step gives up. */
  maxRetries: number;
  /** First wait; each later wait doubles, up to maxDelayMs. */
  baseDelayMs: number;
  maxDelayMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = { maxRetries: 8, baseDelayMs: 1000, maxDelayMs: 30_000 };

export interface RetryNotice {
  /** 1 for the first retry. */
  attempt: number;
  delayMs: number;
  reason: string;
}

export interface OpenAIOptions {
  retry?: Partial<RetryPolicy>;
  onRetry?(notice: RetryNotice): void;
  fetch?: typeof fetch;
}

/** The browser would not let this page read from the server: CORS, mixed content, or the app's own Content Security Policy. */
export class CorsError extends Error {
  override name = 'CorsError';
}

/** Origins the page's Content Security Policy kept this page (or worker) from connecting to, as the browser reported them. */
const refusedByPolicy = new Set<string>();
if (typeof SecurityPolicyViolationEvent !== 'undefined' && typeof addEventListener === 'function') {
  addEventListener('securitypolicyviolation', (event) => {
    const e = event as SecurityPolicyViolationEvent;
    if (e.effectiveDirective !== 'connect-src') return;
    try {
      refusedByPolicy.add(new URL(e.blockedURI).origin);
    } catch {
      // not a URL ("inline", "eval"): nothing to do with servers
    }
  });
}

/** A server answer that says what is wrong: HTTP status and the server's own message. */
export class ServerError extends Error {
  override name = 'ServerError';
  constructor(
    message: string,
    readonly status: number,
    readonly retryAfterMs?: number,
  ) {
    super(message);
  }
}

/** A connection that failed or broke off before the reply was complete. */
class ConnectionError extends Error {
  override name = 'ConnectionError';
}

export interface ServerModel {
  id: string;
  /** The context window the server reports (vLLM's max_model_len), if it does. */
  maxModelLen?: number;
}

/** How prompt sizes are known: from the server's /tokenize, or the local tokenizer with a margin. */
export interface TokenCounts {
  source: 'server' | 'local';
  /** Server tokens per local token (1 when the vocabularies agree). */
  ratio: number;
  /** Tokens the chat template adds around one user message. */
  templateTokens: number;
}

export interface ServerInfo {
  baseUrl: string;
  model: string;
  models: ServerModel[];
  /** The context window in the server's tokens: the smaller of the reported and the entered one. */
  serverContextWindow: number;
  counts: TokenCounts;
}

/** Used when the server cannot count tokens: other vocabularies rarely need 10% more tokens than Qwen's for prose. */
const LOCAL_MARGIN = 1.1;
const LOCAL_TEMPLATE_TOKENS = 64;
/** Tokens kept free beyond the measured ones, for counts that drift by a token here and there. */
const SLACK_TOKENS = 16;

/** Prose with numbers, punctuation and a few non-ASCII letters, to compare the server's token counts with ours. */
const CALIBRATION_TEXT = `The harbour was quiet when the ferry came in at 6:45, three hours late. Nobody on the pier seemed surprised; the captain's log, which later went to the archive in Lisbon, blamed "a wind from nowhere" and a broken compass. Passengers stepped off carrying baskets, umbrellas and, in one case, a cello wrapped in a blanket.

Chapter 12 of the report lists 1,284 crossings between 1921 and 1937. Most took ninety minutes. Some took a whole day! Why? The author suggests fog, strikes, and the café owner's habit of holding the last boat until his friends had finished their coffee — a story that is probably true.

Naïve readers may think these delays were rare. They were not: about one crossing in seven ran late, and the résumé of the harbour master, appended to the report, mentions his "patience with the sea and impatience with everything else."`;

export function normalizeBaseUrl(input: string): string {
  const text = input.trim().replace(/\/+$/, '');
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new ServerError(`"${input}" is not a server address. Enter one like http://127.0.0.1:8000/v1.`, 0);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ServerError(`"${input}" is not an http:// or https:// address. Enter one like http://127.0.0.1:8000/v1.`, 0);
  }
  return text;
}

/** vLLM serves /tokenize beside /v1, not under it. */
function serverRoot(baseUrl: string): string {
  return baseUrl.replace(/\/v1$/, '');
}

/** The server's own words from an error body (OpenAI, vLLM and llama.cpp shapes), else the start of the body. */
async function errorText(res: Response): Promise<string> {
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

function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 409 || status === 425 || status === 429 || status >= 500;
}

async function httpError(res: Response, url: string, model?: string): Promise<ServerError> {
  const said = await errorText(res);
  const status = res.status;
  let message: string;
  if (status === 401 || status === 403) {
    message = `The server refused the API key (HTTP ${status}: ${said}). Enter the key the server was started with (vLLM's --api-key), then Connect again.`;
  } else if (status === 404) {
    message = model
      ? `The server has no model "${model}" or no such endpoint (HTTP 404 from ${url}: ${said}). Check the model name and that the base URL ends in /v1.`
      : `Nothing answers at ${url} (HTTP 404: ${said}). Check that the base URL ends in /v1.`;
  } else if (status === 429) {
    message = `The server is busy (HTTP 429: ${said}).`;
  } else {
    message = `The server answered HTTP ${status}: ${said}`;
  }
  return new ServerError(message, status, retryAfterMs(res.headers.get('retry-after')));
}

function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '[::1]' || /^127\./.test(host);
}

/** What to set on each kind of server so that a page on `origin` may read its replies. */
function corsAdvice(origin: string): string {
  return (
    `Start the server with this origin allowed — vLLM: --allowed-origins '["${origin}"]'; Ollama: OLLAMA_ORIGINS=${origin}; ` +
    `llama.cpp's llama-server allows any origin unless a proxy in front of it drops the Access-Control-Allow-Origin header — then Connect again.`
  );
}

/**
 * A fetch that failed without a response. In a browser that is either an
 * unreachable server or a reply the browser withheld (CORS, mixed content);
 * a no-cors request, which succeeds whenever the server answers at all, tells
 * them apart — except on a cross-origin-isolated page, where such a request
 * is blocked too unless the server sends Cross-Origin-Resource-Policy: then
 * the message names both causes.
 */
async function explainFailure(e: unknown, baseUrl: string, fetchImpl: typeof fetch, checkCors: boolean): Promise<Error> {
  const cause = e instanceof Error ? e.message : String(e);
  const unreachable = new ConnectionError(`Could not reach the server at ${baseUrl} (${cause}). Check that it is running and the address is right.`);
  const here = globalThis as { location?: { origin?: string; protocol?: string }; crossOriginIsolated?: boolean };
  const origin = here.location?.origin;
  // Only pages and workers have an origin; node reports the network error itself.
  if (!checkCors || !origin || origin === 'null') return unreachable;
  const target = new URL(baseUrl);
  if (target.origin === origin) return unreachable;
  if (here.location?.protocol === 'https:' && target.protocol === 'http:' && !isLoopback(target.hostname)) {
    return new CorsError(
      `This page was opened over https, so the browser will not call the plain-http server at ${target.origin}. Serve the model over https (behind a reverse proxy) or open the app over http.`,
    );
  }
  let answered = true;
  try {
    await fetchImpl(`${baseUrl}/models`, { mode: 'no-cors', cache: 'no-store' });
  } catch {
    answered = false;
  }
  // The violation report is an event of its own; by now it has been dispatched.
  await new Promise((resolve) => setTimeout(resolve, 0));
  if (refusedByPolicy.has(target.origin)) {
    return new CorsError(
      `This app's Content Security Policy does not let it connect to ${target.origin}: it may reach its own origin, the model hosts and servers on this device (127.0.0.1, localhost). ` +
        `Make the server reachable on this device (for example through an SSH tunnel: ssh -L 8000:127.0.0.1:8000 <server>, then use http://127.0.0.1:8000/v1), ` +
        `or serve the app built with MEMAGENT_CONNECT_SRC=${target.origin}.`,
    );
  }
  if (!answered) {
    if (!here.crossOriginIsolated) return unreachable;
    return new ConnectionError(
      `No answer the browser could read came from ${target.origin} (${cause}). Either no server is running at ${baseUrl}, ` +
        `or it does not allow requests from this page's origin, ${origin} (CORS). Check the address; if the server is running, ${corsAdvice(origin).replace(/^S/, 's')}`,
    );
  }
  return new CorsError(
    `The server at ${target.origin} answered, but the browser withheld its reply: it does not allow requests from this page's origin, ${origin} (CORS). ${corsAdvice(origin)}`,
  );
}

async function resolveKey(source: ApiKeySource | undefined): Promise<string | undefined> {
  const key = typeof source === 'function' ? await source() : source;
  return key?.trim() || undefined;
}

async function headersFor(config: OpenAIConfig, json: boolean): Promise<Record<string, string>> {
  const headers: Record<string, string> = {};
  if (json) headers['Content-Type'] = 'application/json';
  const key = await resolveKey(config.apiKey);
  if (key) headers.Authorization = `Bearer ${key}`;
  return headers;
}

function positiveInt(x: unknown): number | undefined {
  return typeof x === 'number' && Number.isInteger(x) && x > 0 ? x : undefined;
}

/** GET /models: the models served and, where the server says (vLLM's max_model_len), their context windows. */
export async function listModels(config: OpenAIConfig, options: OpenAIOptions = {}): Promise<{ baseUrl: string; models: ServerModel[] }> {
  const fetchImpl = options.fetch ?? fetch;
  let baseUrl = normalizeBaseUrl(config.baseUrl);
  const get = async (base: string) => {
    const url = `${base}/models`;
    let res: Response;
    try {
      res = await fetchImpl(url, { headers: await headersFor(config, false) });
    } catch (e) {
      throw await explainFailure(e, base, fetchImpl, true);
    }
    return { res, url };
  };
  let { res, url } = await get(baseUrl);
  // People often paste the server's root; its OpenAI API lives under /v1.
  if (res.status === 404 && !/\/v1$/.test(baseUrl)) {
    const second = await get(`${baseUrl}/v1`);
    if (second.res.ok) {
      ({ res, url } = second);
      baseUrl = `${baseUrl}/v1`;
    }
  }
  if (!res.ok) throw await httpError(res, url);
  let body: { data?: { id?: unknown; max_model_len?: unknown; context_length?: unknown; meta?: { n_ctx_train?: unknown } }[] };
  try {
    body = (await res.json()) as typeof body;
  } catch {
    throw new ServerError(`${url} did not answer with JSON: is this an OpenAI-compatible server?`, res.status);
  }
  const models = (body.data ?? [])
    .filter((m) => typeof m.id === 'string')
    .map((m) => {
      const model: ServerModel = { id: m.id as string };
      const len = positiveInt(m.max_model_len) ?? positiveInt(m.context_length);
      if (len) model.maxModelLen = len;
      return model;
    });
  if (models.length === 0) throw new ServerError(`The server at ${baseUrl} lists no models. Start it with a model loaded.`, res.status);
  return { baseUrl, models };
}

/** A token count from the server's /tokenize (vLLM: {prompt} or {messages}; llama.cpp: {content}), or null where it has none. */
async function serverCount(
  config: OpenAIConfig,
  baseUrl: string,
  model: string,
  body: Record<string, unknown>,
  fetchImpl: typeof fetch,
): Promise<number | null> {
  try {
    const res = await fetchImpl(`${serverRoot(baseUrl)}/tokenize`, {
      method: 'POST',
      headers: await headersFor(config, true),
      body: JSON.stringify({ model, ...body }),
    });
    if (!res.ok) return null;
    const json = (await res.json()) as { count?: unknown; tokens?: unknown };
    return positiveInt(json.count) ?? (Array.isArray(json.tokens) && json.tokens.length > 0 ? json.tokens.length : null);
  } catch {
    return null;
  }
}

/** Compares the server's counts with the local tokenizer's on one sample, to size prompts in the server's tokens. */
async function measureCounts(config: OpenAIConfig, baseUrl: string, model: string, tokenizer: Tokenizer, fetchImpl: typeof fetch): Promise<TokenCounts> {
  const plain = await serverCount(config, baseUrl, model, { prompt: CALIBRATION_TEXT, content: CALIBRATION_TEXT, add_special_tokens: false }, fetchImpl);
  if (plain === null) return { source: 'local', ratio: LOCAL_MARGIN, templateTokens: LOCAL_TEMPLATE_TOKENS };
  const chat = await serverCount(config, baseUrl, model, { messages: [{ role: 'user', content: CALIBRATION_TEXT }], add_generation_prompt: true }, fetchImpl);
  return {
    source: 'server',
    ratio: Math.max(1, plain / tokenizer.count(CALIBRATION_TEXT)),
    templateTokens: chat === null ? LOCAL_TEMPLATE_TOKENS : Math.max(0, chat - plain),
  };
}

/** Checks the server, picks the model and its context window, and measures how the server counts tokens. */
export async function connectServer(config: OpenAIConfig, tokenizer: Tokenizer, options: OpenAIOptions = {}): Promise<ServerInfo> {
  const fetchImpl = options.fetch ?? fetch;
  const { baseUrl, models } = await listModels(config, options);
  const wanted = config.model?.trim();
  const chosen = wanted ? models.find((m) => m.id === wanted) : models[0];
  if (!chosen) {
    throw new ServerError(`The server does not serve "${wanted}". It serves: ${models.map((m) => m.id).join(', ')}.`, 404);
  }
  const entered = positiveInt(config.contextWindow);
  const reported = chosen.maxModelLen;
  const window = entered && reported ? Math.min(entered, reported) : (entered ?? reported);
  if (!window) {
    throw new ServerError(
      `The server does not say how many tokens "${chosen.id}" holds. Enter its context window (the size it was started with, e.g. Ollama's num_ctx).`,
      0,
    );
  }
  const counts = await measureCounts(config, baseUrl, chosen.id, tokenizer, fetchImpl);
  return { baseUrl, model: chosen.id, models, serverContextWindow: window, counts };
}

interface StreamState {
  text: string;
  finish?: string;
  usage?: { prompt_tokens?: number; completion_tokens?: number };
  firstTokenAt?: number;
}

interface ChunkJson {
  choices?: { delta?: { content?: string | null }; message?: { content?: string | null }; finish_reason?: string | null }[];
  usage?: { prompt_tokens?: number; completion_tokens?: number } | null;
  error?: { message?: string; code?: number } | string;
  object?: string;
  message?: string;
  code?: number;
}

function applyChunk(state: StreamState, json: ChunkJson, now: number, onToken?: (delta: string) => void): void {
  if (json.error || json.object === 'error') {
    // An error reported inside the stream (vLLM does this): retry it like the same status in a header.
    const err = typeof json.error === 'string' ? { message: json.error } : (json.error ?? { message: json.message, code: json.code });
    const status = err.code ?? json.code ?? 500;
    throw new ServerError(`The server failed while answering (${status}): ${err.message ?? 'no message'}`, status);
  }
  for (const choice of json.choices ?? []) {
    const delta = choice.delta?.content ?? choice.message?.content;
    if (delta) {
      state.firstTokenAt ??= now;
      state.text += delta;
      onToken?.(delta);
    }
    if (choice.finish_reason) state.finish = choice.finish_reason;
  }
  if (json.usage) state.usage = json.usage;
}

/** Reads a server-sent event stream: `data:` lines, events ended by a blank line, `[DONE]` at the end. */
async function readEvents(body: ReadableStream<Uint8Array>, onData: (data: string) => boolean | void): Promise<boolean> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  let data: string[] = [];
  let finished = false;
  const dispatch = (): boolean => {
    if (data.length === 0) return false;
    const payload = data.join('\n');
    data = [];
    if (payload.trim() === '[DONE]') return true;
    return onData(payload) === true;
  };
  try {
    for (;;) {
      const { value, done } = await reader.read();
      buffer += decoder.decode(value ?? new Uint8Array(), { stream: !done });
      let at: number;
      while ((at = buffer.search(/\r\n|\r|\n/)) >= 0) {
        const line = buffer.slice(0, at);
        buffer = buffer.slice(at + (buffer.startsWith('\r\n', at) ? 2 : 1));
        if (line === '') {
          if (dispatch()) return true;
        } else if (line.startsWith('data:')) {
          data.push(line.slice(line.startsWith('data: ') ? 6 : 5));
        } // comments (":") and other fields carry nothing we need
      }
      if (done) {
        finished = true;
        return dispatch();
      }
    }
  } finally {
    // Stopped early ([DONE], a bad event): let the rest of the body go.
    if (!finished) void reader.cancel().catch(() => undefined);
  }
}

/** The engine: one stateless chat request per step, retried until it succeeds or the retries run out. */
export class OpenAIEngine implements Engine {
  readonly id = OPENAI_INFO.id;
  /** A server batches concurrent requests: several runs read at once. */
  readonly parallel = true;
  /** The window in local tokens, with the server's template and any vocabulary difference taken off. */
  readonly contextWindow: number;
  private readonly retry: RetryPolicy;
  private readonly fetchImpl: typeof fetch;
  /** Until one request has gone through, a failure without a response may be the browser refusing the server (CORS). */
  private corsChecked = false;

  constructor(
    readonly server: ServerInfo,
    readonly tokenizer: Tokenizer,
    private readonly config: OpenAIConfig,
    private readonly options: OpenAIOptions = {},
  ) {
    const { counts } = server;
    this.contextWindow = Math.max(0, Math.floor((server.serverContextWindow - counts.templateTokens - SLACK_TOKENS) / counts.ratio));
    this.retry = { ...DEFAULT_RETRY, ...options.retry };
    // Browsers refuse fetch called as a method of another object ("Illegal invocation").
    this.fetchImpl = options.fetch ?? ((input, init) => fetch(input, init));
  }

  get model(): string {
    return this.server.model;
  }

  async generate(messages: readonly ChatMessage[], options: GenerateOptions): Promise<GenerateResult> {
    const { signal } = options;
    let retries = 0;
    for (;;) {
      if (signal?.aborted) throw abortError();
      try {
        const result = await this.attempt(messages, options);
        this.corsChecked = true;
        return { ...result, retries };
      } catch (e) {
        if (signal?.aborted || isAbortError(e)) throw abortError();
        if (e instanceof CorsError) throw e;
        const retryable = e instanceof ConnectionError || (e instanceof ServerError && isRetryableStatus(e.status));
        const reason = e instanceof Error ? e.message : String(e);
        if (!retryable) throw e;
        if (retries >= this.retry.maxRetries) {
          const err = new Error(`${reason} Gave up after ${retries + 1} attempt${retries ? 's' : ''}; the step that failed was not skipped.`);
          err.name = (e as Error).name;
          throw err;
        }
        const backoff = Math.min(this.retry.maxDelayMs, this.retry.baseDelayMs * 2 ** retries) * (0.8 + 0.4 * Math.random());
        // The server's Retry-After is honoured, within reason.
        const hinted = e instanceof ServerError ? e.retryAfterMs : undefined;
        const delayMs = Math.round(hinted !== undefined ? Math.min(hinted, 5 * 60_000) : backoff);
        retries++;
        this.options.onRetry?.({ attempt: retries, delayMs, reason });
        await sleep(delayMs, signal);
      }
    }
  }

  private async attempt(messages: readonly ChatMessage[], options: GenerateOptions): Promise<Omit<GenerateResult, 'retries'>> {
    const url = `${this.server.baseUrl}/chat/completions`;
    // No system message: the server's chat template adds the model's own default, as in the paper's runs.
    const body = openAIBody(stepRequest(messages, options), this.server.model);
    const t0 = performance.now();
    let res: Response;
    try {
      res = await this.fetchImpl(url, {
        method: 'POST',
        headers: { ...(await headersFor(this.config, true)), Accept: 'text/event-stream' },
        body: JSON.stringify(body),
        signal: options.signal,
      });
    } catch (e) {
      if (options.signal?.aborted || isAbortError(e)) throw abortError();
      throw await explainFailure(e, this.server.baseUrl, this.fetchImpl, !this.corsChecked);
    }
    if (!res.ok) throw await httpError(res, url, this.server.model);

    const state: StreamState = { text: '' };
    try {
      if ((res.headers.get('content-type') ?? '').includes('text/event-stream') && res.body) {
        const complete = await readEvents(res.body, (data) => {
          let json: ChunkJson;
          try {
            json = JSON.parse(data) as ChunkJson;
          } catch {
            throw new ConnectionError(`The server sent a broken event: ${data.slice(0, 120)}`);
          }
          applyChunk(state, json, performance.now(), options.onToken);
        });
        // A stream that stops before [DONE] or a finish reason was cut off: the step is incomplete.
        if (!complete && !state.finish) throw new ConnectionError('The connection closed before the reply was complete.');
      } else {
        // A server that ignores `stream` answers with one JSON object.
        applyChunk(state, (await res.json()) as ChunkJson, performance.now(), options.onToken);
      }
    } catch (e) {
      if (options.signal?.aborted || isAbortError(e)) throw abortError();
      if (e instanceof ServerError || e instanceof ConnectionError) throw e;
      throw new ConnectionError(`The connection broke off during the reply (${e instanceof Error ? e.message : String(e)}).`);
    }
    const end = performance.now();
    return { text: state.text, finishReason: finishReason(state.finish), usage: this.usage(messages, state, t0, end) };
  }

  private usage(messages: readonly ChatMessage[], state: StreamState, t0: number, end: number): Usage {
    const { counts } = this.server;
    const promptTokens =
      positiveInt(state.usage?.prompt_tokens) ??
      Math.ceil(messages.reduce((n, m) => n + this.tokenizer.count(m.content), 0) * counts.ratio) + counts.templateTokens;
    const completionTokens = state.usage?.completion_tokens ?? Math.ceil(this.tokenizer.count(state.text) * counts.ratio);
    const usage: Usage = { promptTokens, completionTokens };
    if (state.firstTokenAt !== undefined) {
      usage.timeToFirstTokenSeconds = (state.firstTokenAt - t0) / 1000;
      const decodeSeconds = (end - state.firstTokenAt) / 1000;
      if (decodeSeconds > 0 && completionTokens > 1) usage.decodeTokensPerSecond = (completionTokens - 1) / decodeSeconds;
    }
    return usage;
  }
}

function finishReason(reason: string | undefined): FinishReason {
  return reason === 'length' ? 'length' : 'stop';
}

/** A run's stored config (no secrets) and a key from elsewhere → what the engine needs; refuses a config without an address. */
export function openAIConfig(config: EngineConfig | undefined, apiKey?: ApiKeySource): OpenAIConfig {
  const baseUrl = typeof config?.baseUrl === 'string' ? config.baseUrl.trim() : '';
  if (!baseUrl) {
    throw new ServerError('Enter the address of the server under Base URL (for example http://127.0.0.1:8000/v1), then press Connect.', 0);
  }
  const out: OpenAIConfig = { baseUrl };
  if (typeof config?.model === 'string' && config.model.trim()) out.model = config.model.trim();
  const window = Number(config?.contextWindow);
  if (Number.isInteger(window) && window > 0) out.contextWindow = window;
  if (apiKey !== undefined) out.apiKey = apiKey;
  return out;
}

/** What Connect shows: the server's answer and the room a read will have. */
export interface ServerCheck extends ServerInfo {
  /** Tokens a step may use, in the local tokenizer's count. */
  contextWindow: number;
}

export async function checkServer(config: OpenAIConfig, tokenizer: Tokenizer, options: OpenAIOptions = {}): Promise<ServerCheck> {
  const engine = await createOpenAIEngine(config, tokenizer, options);
  return { ...engine.server, contextWindow: engine.contextWindow };
}

/** Connects to the server and returns the engine, or throws an error that says what to fix. */
export async function createOpenAIEngine(config: OpenAIConfig, tokenizer: Tokenizer, options: OpenAIOptions = {}): Promise<OpenAIEngine> {
  const server = await connectServer(config, tokenizer, options);
  return new OpenAIEngine(server, tokenizer, config, options);
}
