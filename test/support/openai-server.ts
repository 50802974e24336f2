/**
 * A small OpenAI-compatible server for tests and benchmarks: the protocol vLLM
 * speaks (/v1/models with max_model_len, /v1/chat/completions streamed or not,
 * with usage, /tokenize, its error shapes), answered by the extractive engine
 * with the real Qwen tokenizer. Failures can be injected, replies slowed down
 * per token, and the server stopped and started again on the same port.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { ChatMessage } from '../../src/core/generation';
import { ExtractiveEngine } from '../../src/engines/extractive/engine';
import { loadQwenTokenizer, type QwenTokenizer } from '../../src/engines/qwen-tokenizer';

export type Failure =
  /** HTTP 429 with a Retry-After header (seconds, may be fractional). */
  | { kind: 429; retryAfter?: number }
  | { kind: 500 | 502 | 503 }
  /** The socket is closed before any reply. */
  | { kind: 'drop' }
  /** Some of the reply is streamed, then the socket is closed. */
  | { kind: 'drop-mid-stream' };

export interface OpenAIServerOptions {
  port?: number;
  host?: string;
  model?: string;
  maxModelLen?: number;
  /** Origin allowed by CORS: '*', one origin, or null for no CORS headers at all (the browser refuses every reply). */
  allowedOrigin?: string | null;
  /** Milliseconds per completion token, as a model decoding would take; concurrent replies overlap like continuous batching. */
  tokenDelayMs?: number;
  /** Require this bearer token. */
  apiKey?: string;
  /** Answer /tokenize (vLLM does, Ollama does not). */
  tokenize?: boolean;
  /** Keep each chat request's JSON body in the log, to check requests byte for byte. */
  keepBodies?: boolean;
  /**
   * Answers raw text completions (`POST /v1/completions`, as InfMem sends them) with what this returns for
   * each request's body, in arrival order; without it that endpoint is not served (404).
   */
  completions?: (body: CompletionBody, index: number) => string;
  /** Rewrites each reply before it is sent, as a model with other habits would answer (spaces around it, a <think> part). */
  reply?: (text: string, messages: readonly ChatMessage[]) => string;
  /** Answers chat requests with what this returns for their messages, as a model would, instead of the extractive engine. */
  chatScript?: (messages: readonly ChatMessage[]) => string;
}

/** A raw completion request's body, as a client sent it. */
export interface CompletionBody {
  model?: unknown;
  prompt?: unknown;
  max_tokens?: unknown;
  temperature?: unknown;
  top_p?: unknown;
  [key: string]: unknown;
}

/** What a held-request rule sees of a chat request. */
export interface HeldRequest {
  /** A final-answer request (no <section> block). */
  final: boolean;
  /** The first characters of the <section> block, for update requests. */
  section?: string;
  /** The last message's text: the prompt with the question in it. */
  prompt: string;
}

export interface RequestRecord {
  path: string;
  status: number;
  /** The first characters of the <section> block, for update requests. */
  section?: string;
  final?: boolean;
  /** The request's JSON body, with keepBodies. */
  body?: Record<string, unknown>;
}

/** The chat template's cost around one user message: Qwen2.5's default system prompt and role markers. */
function chatTemplate(messages: readonly ChatMessage[]): string {
  const system = messages[0]?.role === 'system' ? '' : '<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant.<|im_end|>\n';
  return `${system}${messages.map((m) => `<|im_start|>${m.role}\n${m.content}<|im_end|>\n`).join('')}<|im_start|>assistant\n`;
}

const SPECIAL = /<\|im_(start|end)\|>/g;

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

export class OpenAITestServer {
  readonly model: string;
  readonly maxModelLen: number;
  allowedOrigin: string | null;
  tokenDelayMs: number;
  readonly log: RequestRecord[] = [];
  /** Every chat request's JSON body, in arrival order: what the client sent, byte for byte once parsed. */
  readonly chatBodies: Record<string, unknown>[] = [];
  /** Every raw completion request's JSON body, in arrival order. */
  readonly completionBodies: CompletionBody[] = [];
  private readonly failures: Failure[] = [];
  private readonly sockets = new Set<Socket>();
  private server: Server | null = null;
  private engine: Promise<{ engine: ExtractiveEngine; tokenizer: QwenTokenizer }> | null = null;
  /** Decides, for each chat request as it arrives, whether it waits unanswered until `release()`. */
  private holdMatch: ((request: HeldRequest) => boolean) | null = null;
  /** Where a held request waits: before any reply, or (streamed) after its first piece. */
  private holdWhere: 'arrival' | 'first piece' = 'arrival';
  private inFlight = 0;
  /** The most chat requests that were being answered at once. */
  maxInFlight = 0;
  private held: (() => void)[] = [];
  private heldListeners: { count: number; resolve: () => void }[] = [];
  port: number;

  constructor(private readonly options: OpenAIServerOptions = {}) {
    this.model = options.model ?? 'memagent-test';
    this.maxModelLen = options.maxModelLen ?? 32_768;
    this.allowedOrigin = options.allowedOrigin === undefined ? '*' : options.allowedOrigin;
    this.tokenDelayMs = options.tokenDelayMs ?? 0;
    this.port = options.port ?? 0;
  }

  /** The OpenAI base URL, ending in /v1. */
  get url(): string {
    return `http://${this.options.host ?? '127.0.0.1'}:${this.port}/v1`;
  }

  get chatRequests(): RequestRecord[] {
    return this.log.filter((r) => r.path === '/v1/chat/completions');
  }

  /** The next requests to /v1/chat/completions fail like this, in order. */
  fail(...failures: Failure[]): void {
    this.failures.push(...failures);
  }

  /** Chat requests after the next `n` wait unanswered; resolves when the first of them arrives. */
  holdAfterNext(n: number): Promise<void> {
    let left = n;
    return this.hold(() => left-- <= 0);
  }

  /**
   * Every chat request that `match` accepts (asked once per request, in
   * arrival order) waits unanswered until `release()`: a step the test holds in
   * flight, however fast the client is. With `where` 'first piece', a streamed
   * reply waits after its first piece instead. Resolves when the first is held.
   */
  hold(match: (request: HeldRequest) => boolean, where: 'arrival' | 'first piece' = 'arrival'): Promise<void> {
    this.holdMatch = match;
    this.holdWhere = where;
    return this.whenHeld(1);
  }

  /** Resolves once `count` chat requests are held at the same time. */
  whenHeld(count: number): Promise<void> {
    if (this.held.length >= count) return Promise.resolve();
    return new Promise((resolve) => this.heldListeners.push({ count, resolve }));
  }

  /** Answers the held requests and holds no more. */
  release(): void {
    this.holdMatch = null;
    this.releaseHeld();
  }

  /** Answers the requests held now; the rule (a new one set just before, say) goes on holding later ones. */
  releaseHeld(): void {
    for (const go of this.held.splice(0)) go();
  }

  async start(): Promise<this> {
    this.engine ??= loadQwenTokenizer().then((tokenizer) => ({ engine: new ExtractiveEngine(tokenizer), tokenizer }));
    const server = createServer((req, res) => void this.handle(req, res));
    server.on('connection', (socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, this.options.host ?? '127.0.0.1', () => resolve());
    });
    this.port = (server.address() as { port: number }).port;
    this.server = server;
    return this;
  }

  /** Stops listening and cuts every open connection, as a crashed or restarted server does. */
  async stop(): Promise<void> {
    const server = this.server;
    this.server = null;
    if (!server) return;
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    for (const socket of this.sockets) socket.destroy();
    this.release();
    await closed;
  }

  private cors(req: IncomingMessage, res: ServerResponse): void {
    const origin = req.headers.origin;
    if (!origin || this.allowedOrigin === null) return;
    if (this.allowedOrigin !== '*' && this.allowedOrigin !== origin) return;
    res.setHeader('Access-Control-Allow-Origin', this.allowedOrigin === '*' ? '*' : origin);
    res.setHeader('Vary', 'Origin');
  }

  private send(req: IncomingMessage, res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
    this.record(req, status);
    res.writeHead(status, { 'Content-Type': 'application/json', ...headers });
    res.end(JSON.stringify(body));
  }

  private error(req: IncomingMessage, res: ServerResponse, status: number, message: string, type: string, headers: Record<string, string> = {}): void {
    this.send(req, res, status, { error: { message, type, param: null, code: status } }, headers);
  }

  /** What a chat request was about, logged with its outcome. */
  private readonly about = new WeakMap<IncomingMessage, Partial<RequestRecord>>();

  private record(req: IncomingMessage, status: number): void {
    const path = (req.url ?? '').split('?')[0] ?? '';
    this.log.push({ path, status, ...this.about.get(req) });
  }

  private async body(req: IncomingMessage): Promise<Record<string, unknown>> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    return text ? (JSON.parse(text) as Record<string, unknown>) : {};
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    try {
      this.cors(req, res);
      const path = (req.url ?? '').split('?')[0];
      if (req.method === 'OPTIONS') {
        if (this.allowedOrigin === null || !res.hasHeader('Access-Control-Allow-Origin')) {
          res.writeHead(400).end('Disallowed CORS origin');
          return;
        }
        res.writeHead(204, {
          'Access-Control-Allow-Methods': 'GET, POST, OPTIONS',
          'Access-Control-Allow-Headers': 'Authorization, Content-Type',
          'Access-Control-Max-Age': '600',
        });
        res.end();
        return;
      }
      if (path === '/__test/stats') {
        return this.send(req, res, 200, { chatCompletions: this.chatRequests.filter((r) => r.status === 200).length, maxInFlight: this.maxInFlight });
      }
      if (path === '/__test/fail' && req.method === 'POST') {
        this.fail(...((await this.body(req)).failures as Failure[]));
        return this.send(req, res, 200, { ok: true });
      }
      if (this.options.apiKey && req.headers.authorization !== `Bearer ${this.options.apiKey}`) {
        return this.error(req, res, 401, 'Unauthorized', 'AuthenticationError');
      }
      if (path === '/v1/models' && req.method === 'GET') return this.models(req, res);
      if (path === '/tokenize' && req.method === 'POST' && this.options.tokenize !== false) return await this.tokenize(req, res);
      if (path === '/v1/completions' && req.method === 'POST' && this.options.completions) return await this.completion(req, res, this.options.completions);
      if (path === '/v1/chat/completions' && req.method === 'POST') {
        this.maxInFlight = Math.max(this.maxInFlight, ++this.inFlight);
        try {
          return await this.chat(req, res);
        } finally {
          this.inFlight--;
        }
      }
      return this.error(req, res, 404, `No route ${req.method} ${path}`, 'NotFoundError');
    } catch (e) {
      if (!res.headersSent) this.error(req, res, 500, e instanceof Error ? e.message : String(e), 'InternalServerError');
      else res.destroy();
    }
  }

  /** One raw completion, answered by the test's script (usage counted with the real tokenizer). */
  private async completion(req: IncomingMessage, res: ServerResponse, script: NonNullable<OpenAIServerOptions['completions']>): Promise<void> {
    const body = (await this.body(req)) as CompletionBody;
    const index = this.completionBodies.push(body) - 1;
    const failure = this.failures.shift();
    if (failure) return this.error(req, res, typeof failure.kind === 'number' ? failure.kind : 503, 'Injected failure', 'ServiceUnavailableError');
    const { tokenizer } = await this.engine!;
    const text = script(body, index);
    const usage = { prompt_tokens: tokenizer.count(String(body.prompt ?? '')), completion_tokens: tokenizer.count(text) };
    this.send(req, res, 200, {
      id: `cmpl-${index}`,
      object: 'text_completion',
      created: 1_700_000_000,
      model: this.model,
      choices: [{ index: 0, text, logprobs: null, finish_reason: 'stop' }],
      usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens },
    });
  }

  private models(req: IncomingMessage, res: ServerResponse): void {
    this.send(req, res, 200, {
      object: 'list',
      data: [{ id: this.model, object: 'model', created: 1_700_000_000, owned_by: 'vllm', root: this.model, parent: null, max_model_len: this.maxModelLen }],
    });
  }

  private async tokenize(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const { tokenizer } = await this.engine!;
    const body = await this.body(req);
    const messages = body.messages as ChatMessage[] | undefined;
    const tokens = messages ? this.encodeChat(tokenizer, messages) : tokenizer.encode(String(body.prompt ?? body.content ?? ''));
    this.send(req, res, 200, { count: tokens.length, max_model_len: this.maxModelLen, tokens });
  }

  /** The chat template encoded with each role marker as one special token. */
  private encodeChat(tokenizer: QwenTokenizer, messages: readonly ChatMessage[]): number[] {
    const text = chatTemplate(messages);
    const ids: number[] = [];
    let last = 0;
    for (const m of text.matchAll(SPECIAL)) {
      ids.push(...tokenizer.encode(text.slice(last, m.index)), m[1] === 'start' ? 151644 : 151645);
      last = m.index + m[0].length;
    }
    ids.push(...tokenizer.encode(text.slice(last)));
    return ids;
  }

  private async chat(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = await this.body(req);
    this.chatBodies.push(body);
    const messages = (body.messages ?? []) as ChatMessage[];
    const prompt = messages[messages.length - 1]?.content ?? '';
    const section = /<section>\n([\s\S]{0,80})/.exec(prompt)?.[1];
    this.about.set(req, { ...(section === undefined ? { final: true } : { section }), ...(this.options.keepBodies && { body }) });

    const held = this.holdMatch?.({ final: section === undefined, prompt, ...(section !== undefined && { section }) }) ? this.holdWhere : undefined;
    if (held === 'arrival') {
      await this.waitHeld();
      if (!this.server) return; // stopped while held: the socket is gone
      if (req.socket.destroyed) return this.record(req, 0); // the client went away meanwhile (a closed tab)
    }
    const failure = this.failures.shift();
    if (failure?.kind === 'drop') {
      this.record(req, 0);
      req.socket.destroy();
      return;
    }
    if (failure?.kind === 429) {
      const headers: Record<string, string> = failure.retryAfter === undefined ? {} : { 'Retry-After': String(failure.retryAfter) };
      return this.error(req, res, 429, 'Too many requests', 'RateLimitError', headers);
    }
    if (failure && typeof failure.kind === 'number') return this.error(req, res, failure.kind, 'The engine failed', 'InternalServerError');
    if (body.model !== this.model) return this.error(req, res, 404, `The model \`${String(body.model)}\` does not exist.`, 'NotFoundError');

    const { engine, tokenizer } = await this.engine!;
    const promptTokens = this.encodeChat(tokenizer, messages).length;
    const maxTokens = typeof body.max_tokens === 'number' ? body.max_tokens : this.maxModelLen - promptTokens;
    if (promptTokens + maxTokens > this.maxModelLen) {
      return this.error(
        req,
        res,
        400,
        `This model's maximum context length is ${this.maxModelLen} tokens. However, you requested ${promptTokens + maxTokens} tokens ` +
          `(${promptTokens} in the messages, ${maxTokens} in the completion). Please reduce the length of the messages or completion.`,
        'BadRequestError',
      );
    }
    const script = this.options.chatScript;
    const generated = script ? { text: script(messages) } : await engine.generate(messages, { maxTokens });
    const result = this.options.reply ? { ...generated, text: this.options.reply(generated.text, messages) } : generated;
    // Split the reply into the pieces a model would stream, at most max_tokens of them.
    const pieces: { text: string; tokens: number }[] = [];
    let completionTokens = 0;
    let finish: 'stop' | 'length' = 'stop';
    for (const p of tokenizer.pieces(result.text)) {
      if (completionTokens + p.tokens > maxTokens) {
        finish = 'length';
        break;
      }
      pieces.push({ text: result.text.slice(p.start, p.end), tokens: p.tokens });
      completionTokens += p.tokens;
    }
    const id = `chatcmpl-${this.log.length}`;
    const created = Math.floor(Date.now() / 1000);
    const usage = { prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: promptTokens + completionTokens };

    if (body.stream !== true) {
      await sleep(this.tokenDelayMs * completionTokens);
      return this.send(req, res, 200, {
        id,
        object: 'chat.completion',
        created,
        model: this.model,
        choices: [{ index: 0, message: { role: 'assistant', content: pieces.map((p) => p.text).join('') }, finish_reason: finish }],
        usage,
      });
    }

    res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache', Connection: 'keep-alive' });
    const chunk = (delta: Record<string, unknown>, finishReason: string | null = null) =>
      `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model: this.model, choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }] })}\n\n`;
    res.write(chunk({ role: 'assistant', content: '' }));
    const t0 = performance.now();
    let sent = 0;
    for (let i = 0; i < pieces.length; i++) {
      const piece = pieces[i]!;
      if (failure?.kind === 'drop-mid-stream' && i >= pieces.length / 2) return this.cut(req, res);
      sent += piece.tokens;
      // Paced against the clock, so that timer granularity does not add up over a long reply.
      const due = t0 + sent * this.tokenDelayMs - performance.now();
      if (due > 1) await sleep(due);
      if (res.destroyed) return this.record(req, 0);
      res.write(chunk({ content: piece.text }));
      if (i === 0 && held === 'first piece') {
        await this.waitHeld();
        if (!this.server || res.destroyed) return this.record(req, 0);
      }
    }
    if (failure?.kind === 'drop-mid-stream') return this.cut(req, res);
    res.write(chunk({}, finish));
    const streamOptions = body.stream_options as { include_usage?: boolean } | undefined;
    if (streamOptions?.include_usage) {
      res.write(`data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model: this.model, choices: [], usage })}\n\n`);
    }
    res.end('data: [DONE]\n\n');
    this.record(req, 200);
  }

  /** Waits until released, counted among the held requests. */
  private async waitHeld(): Promise<void> {
    const released = new Promise<void>((resolve) => this.held.push(resolve));
    for (const l of this.heldListeners.filter((l) => this.held.length >= l.count)) {
      this.heldListeners.splice(this.heldListeners.indexOf(l), 1);
      l.resolve();
    }
    await released;
  }

  /** Closes the connection in the middle of a reply; logged with status 0, like a request that got no answer. */
  private cut(req: IncomingMessage, res: ServerResponse): void {
    this.record(req, 0);
    res.socket?.destroy();
  }
}

export function startOpenAIServer(options: OpenAIServerOptions = {}): Promise<OpenAITestServer> {
  return new OpenAITestServer(options).start();
}
