import { abortError, type ChatMessage, type FinishReason, type GenerateOptions, type GenerateResult, isAbortError, type Usage } from '../../core/generation';
import type { Tokenizer } from '../../core/tokenizer';
import type { RawCompleter } from '../../core/infmem/thinking';
import type { Engine } from '../engine';
import { ServerError, ServerUnreachableError } from '../errors';
import { openAIBody, stepRequest } from '../request';
import { rawCompletions } from './completions';
import { connectServer, type ServerInfo } from './connect';
import { explainFailure, listenForPolicyRefusals } from './diagnose';
import { headersFor, httpError, type OpenAIConfig, positiveInt } from './http';
import { DEFAULT_RETRY, type RetryNotice, type RetryPolicy, withRetries } from './retry';
import { OPENAI_INFO, REQUESTS_AT_ONCE } from './info';
import { applyChunk, type ChunkJson, readEvents, type StreamState } from './sse';

/**
 * Any server that speaks the OpenAI chat-completions protocol (vLLM, SGLang,
 * llama.cpp's llama-server, Ollama): the same memory loop, one HTTP request per
 * chunk, streamed over server-sent events. Uses only `fetch`, so it runs in the
 * app's worker and in node alike. Connecting lives in `connect.ts`, retries in
 * `retry.ts`, the event stream in `sse.ts`, failed fetches explained in
 * `diagnose.ts`.
 */

export interface OpenAIOptions {
  retry?: Partial<RetryPolicy>;
  onRetry?(notice: RetryNotice): void;
  fetch?: typeof fetch;
}

/** Tokens kept free beyond the measured ones, for counts that drift by a token here and there. */
const SLACK_TOKENS = 16;

/** The engine: one stateless chat request per step, retried until it succeeds or the retries run out. */
export class OpenAIEngine implements Engine {
  readonly id = OPENAI_INFO.id;
  /** A server batches concurrent requests: several runs read at once. */
  readonly parallel = true;
  /** How many of those requests are in flight at once (the connection's setting). */
  readonly requestsAtOnce: number;
  /** The window in local tokens, with the server's template and any vocabulary difference taken off. */
  readonly contextWindow: number;
  private readonly retry: RetryPolicy;
  private readonly fetchImpl: typeof fetch;
  /** Until one request has gone through, a failure without a response may be the browser refusing the server (CORS). */
  private corsChecked = false;
  /** Raw completions at the same server and model (its chat endpoint where it has none), retried as chat requests are. */
  readonly completer: RawCompleter;

  constructor(
    readonly server: ServerInfo,
    readonly tokenizer: Tokenizer,
    private readonly config: OpenAIConfig,
    private readonly options: OpenAIOptions = {},
  ) {
    const { counts } = server;
    this.contextWindow = Math.max(0, Math.floor((server.serverContextWindow - counts.templateTokens - SLACK_TOKENS) / counts.ratio));
    this.retry = { ...DEFAULT_RETRY, ...options.retry };
    this.requestsAtOnce = config.requestsAtOnce ?? REQUESTS_AT_ONCE.default;
    // Browsers refuse fetch called as a method of another object ("Illegal invocation").
    this.fetchImpl = options.fetch ?? ((input, init) => fetch(input, init));
    const { baseUrl, model } = server;
    this.completer = rawCompletions(
      { config, baseUrl, model },
      { fetch: this.fetchImpl, retry: this.retry, ...(options.onRetry && { onRetry: options.onRetry }) },
    ).completer;
    listenForPolicyRefusals();
  }

  get model(): string {
    return this.server.model;
  }

  async generate(messages: readonly ChatMessage[], options: GenerateOptions): Promise<GenerateResult> {
    const { result, retries } = await withRetries(
      async () => {
        const reply = await this.attempt(messages, options);
        this.corsChecked = true;
        return reply;
      },
      { policy: this.retry, signal: options.signal, onRetry: this.options.onRetry },
    );
    return { ...result, retries };
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
      throw await explainFailure({ error: e, baseUrl: this.server.baseUrl, fetchImpl: this.fetchImpl, checkCors: !this.corsChecked });
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
            throw new ServerUnreachableError(`The server sent a broken event: ${data.slice(0, 120)}`);
          }
          applyChunk(state, json, performance.now(), options.onToken);
        });
        // A stream that stops before [DONE] or a finish reason was cut off: the step is incomplete.
        if (!complete && !state.finish) throw new ServerUnreachableError('The connection closed before the reply was complete.');
      } else {
        // A server that ignores `stream` answers with one JSON object.
        applyChunk(state, (await res.json()) as ChunkJson, performance.now(), options.onToken);
      }
    } catch (e) {
      if (options.signal?.aborted || isAbortError(e)) throw abortError();
      if (e instanceof ServerError || e instanceof ServerUnreachableError) throw e;
      throw new ServerUnreachableError(`The connection broke off during the reply (${e instanceof Error ? e.message : String(e)}).`);
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
  const server = await connectServer(config, tokenizer, options.fetch);
  return new OpenAIEngine(server, tokenizer, config, options);
}
