import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chunkAll } from '../src/core/chunker';
import { memoryLoop, type RevisionEvent } from '../src/core/loop';
import { DEFAULT_TEMPLATES, INITIAL_MEMORY, updatePrompt } from '../src/core/prompts';
import { ExtractiveEngine } from '../src/engines/extractive/engine';
import { createOpenAIEngine, type OpenAIEngine } from '../src/engines/openai/engine';
import { openAIConfig } from '../src/engines/openai/http';
import type { RetryNotice } from '../src/engines/openai/retry';
import { EngineSettingsError, RetriesExhaustedError, ServerError, ServerUnreachableError } from '../src/engines/errors';
import { loadQwenTokenizer, type QwenTokenizer } from '../src/engines/qwen-tokenizer';
import { corpusText } from './helpers';
import { type Failure, type OpenAITestServer, startOpenAIServer } from './support/openai-server';

const QUESTION = 'What is the vault code for the Marlowe archive?';
const NEEDLE = 'The vault code for the Marlowe archive is 4829137.';
const FAST = { baseDelayMs: 5, maxDelayMs: 20 };

let tok: QwenTokenizer;
let server: OpenAITestServer;
let book: string;

beforeAll(async () => {
  tok = await loadQwenTokenizer();
  server = await startOpenAIServer();
  const excerpt = corpusText('frankenstein.txt').slice(60_000, 100_000);
  const cut = excerpt.indexOf('. ', 25_000) + 2;
  book = excerpt.slice(0, cut) + NEEDLE + ' ' + excerpt.slice(cut);
});

afterAll(async () => {
  await server?.stop();
});

function update(section: string): { role: 'user'; content: string }[] {
  return [{ role: 'user', content: updatePrompt(DEFAULT_TEMPLATES, QUESTION, INITIAL_MEMORY, section) }];
}

describe('OpenAI-compatible engine', () => {
  it('connects: model and context window from /v1/models, token counts from /tokenize', async () => {
    const engine = await createOpenAIEngine({ baseUrl: server.url }, tok);
    expect(engine.model).toBe('memagent-test');
    expect(engine.server.serverContextWindow).toBe(32_768);
    // The server counts with the same vocabulary, so the counts agree and only the chat template is taken off.
    expect(engine.server.counts.source).toBe('server');
    expect(engine.server.counts.ratio).toBe(1);
    expect(engine.server.counts.templateTokens).toBeGreaterThan(10);
    expect(engine.server.counts.templateTokens).toBeLessThan(40);
    expect(engine.contextWindow).toBe(32_768 - engine.server.counts.templateTokens - 16);
    // The server's root works too; its API is found under /v1.
    const root = await createOpenAIEngine({ baseUrl: server.url.replace(/\/v1$/, '/'), model: 'memagent-test' }, tok);
    expect(root.server.baseUrl).toBe(server.url);
    // An entered window smaller than the server's wins; a model the server lacks is refused by name.
    expect((await createOpenAIEngine({ baseUrl: server.url, contextWindow: 8192 }, tok)).server.serverContextWindow).toBe(8192);
    await expect(createOpenAIEngine({ baseUrl: server.url, model: 'qwen-72b' }, tok)).rejects.toThrow(/does not serve "qwen-72b".*memagent-test/);
  });

  it('continues a prompt as given at the same server and model, retried like a chat request', async () => {
    const raw = await startOpenAIServer({ completions: (body) => `continued ${String(body.prompt).length}` });
    try {
      const engine = await createOpenAIEngine({ baseUrl: raw.url }, tok, { retry: FAST });
      raw.fail({ kind: 503 });
      const result = await engine.completer.complete({
        prompt: '<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n',
        maxTokens: 7,
        temperature: 0.7,
        topP: 0.95,
      });
      expect(result.text).toBe('continued 52');
      expect(raw.completionBodies.at(-1)).toEqual({
        model: 'memagent-test',
        prompt: '<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n',
        max_tokens: 7,
        temperature: 0.7,
        top_p: 0.95,
      });
      expect(raw.completionBodies).toHaveLength(2);
    } finally {
      await raw.stop();
    }
  });

  it('a mistake in what the person entered is theirs to fix, not a server error with a made-up status', async () => {
    for (const config of [{ baseUrl: 'not an address' }, { baseUrl: 'ftp://127.0.0.1/v1' }, { baseUrl: server.url, model: 'qwen-72b' }]) {
      const error = await createOpenAIEngine(config, tok).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(EngineSettingsError);
      expect(error).not.toBeInstanceOf(ServerError);
      expect(error).not.toHaveProperty('status');
    }
    const refused = await createOpenAIEngine({ baseUrl: server.url.replace(/:\d+/, ':1') }, tok).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ServerUnreachableError);
    expect((refused as Error).cause).toBeInstanceOf(Error);
  });

  it('has 4 requests in flight at once unless the config says otherwise, and refuses a number outside 1 to 64 with what to enter', async () => {
    expect((await createOpenAIEngine(openAIConfig({ baseUrl: server.url }), tok)).requestsAtOnce).toBe(4);
    expect((await createOpenAIEngine(openAIConfig({ baseUrl: server.url, requestsAtOnce: 1 }), tok)).requestsAtOnce).toBe(1);
    expect(openAIConfig({ baseUrl: server.url, requestsAtOnce: 64 }).requestsAtOnce).toBe(64);
    for (const requestsAtOnce of [0, 65, 2.5, '3']) {
      const config = { baseUrl: server.url, requestsAtOnce };
      expect(() => openAIConfig(config)).toThrow(EngineSettingsError);
      expect(() => openAIConfig(config)).toThrow(/^Requests in flight at once must be a whole number from 1 to 64, not /);
    }
  });

  it('without /tokenize, counts locally with a margin', async () => {
    const plain = await startOpenAIServer({ tokenize: false, maxModelLen: 8192 });
    try {
      const engine = await createOpenAIEngine({ baseUrl: plain.url }, tok);
      expect(engine.server.counts).toEqual({ source: 'local', ratio: 1.1, templateTokens: 64 });
      expect(engine.contextWindow).toBe(Math.floor((8192 - 64 - 16) / 1.1));
    } finally {
      await plain.stop();
    }
  });

  it('streams the reply and takes the token counts from the server', async () => {
    const engine = await createOpenAIEngine({ baseUrl: server.url }, tok);
    const messages = update(book.slice(20_000, 30_000));
    const deltas: string[] = [];
    const result = await engine.generate(messages, { maxTokens: 512, onToken: (d) => deltas.push(d) });
    const local = await new ExtractiveEngine(tok).generate(messages, { maxTokens: 512 });
    expect(result.text).toBe(local.text);
    expect(deltas.length).toBeGreaterThan(5);
    expect(deltas.join('')).toBe(result.text);
    expect(result.finishReason).toBe('stop');
    expect(result.retries).toBe(0);
    expect(result.usage.completionTokens).toBe(tok.count(result.text));
    expect(result.usage.promptTokens).toBe(tok.count(messages[0]!.content) + engine.server.counts.templateTokens);
  });

  it('waits out a 429 for as long as Retry-After says, then repeats the step', async () => {
    const notices: RetryNotice[] = [];
    const engine = await createOpenAIEngine({ baseUrl: server.url }, tok, { retry: FAST, onRetry: (n) => notices.push(n) });
    server.fail({ kind: 429, retryAfter: 0.4 });
    const t0 = performance.now();
    const result = await engine.generate(update('The sky is blue.'), { maxTokens: 64 });
    expect(performance.now() - t0).toBeGreaterThanOrEqual(390);
    expect(result.retries).toBe(1);
    expect(notices).toEqual([{ attempt: 1, delayMs: 400, reason: expect.stringMatching(/busy \(HTTP 429/) }]);
  });

  it('retries 500s, refused and dropped connections, and a reply cut off halfway, with the same request', async () => {
    const engine = await createOpenAIEngine({ baseUrl: server.url }, tok, { retry: FAST });
    const messages = update(book.slice(0, 8000));
    const clean = await engine.generate(messages, { maxTokens: 512 });
    const before = server.chatRequests.length;
    server.fail({ kind: 500 }, { kind: 503 }, { kind: 'drop' }, { kind: 'drop-mid-stream' });
    const deltas: string[] = [];
    const result = await engine.generate(messages, { maxTokens: 512, onToken: (d) => deltas.push(d) });
    expect(result.retries).toBe(4);
    expect(result.text).toBe(clean.text); // the half-streamed attempt left nothing behind
    const attempts = server.chatRequests.slice(before);
    expect(attempts.map((r) => r.status)).toEqual([500, 503, 0, 0, 200]);
    expect(new Set(attempts.map((r) => r.section)).size).toBe(1);
  });

  it('gives up after its retries with a message, and does not retry what cannot succeed', async () => {
    const engine = await createOpenAIEngine({ baseUrl: server.url }, tok, { retry: { ...FAST, maxRetries: 2 } });
    server.fail({ kind: 503 }, { kind: 503 }, { kind: 503 });
    const gaveUp = await engine.generate(update('x'), { maxTokens: 16 }).catch((e: unknown) => e);
    expect(gaveUp).toBeInstanceOf(RetriesExhaustedError);
    expect((gaveUp as Error).message).toMatch(/HTTP 503.*Gave up after 3 attempts; the step that failed was not skipped/);
    // The server's own last answer stays the cause, status and words intact.
    const cause = (gaveUp as Error).cause;
    expect(cause).toBeInstanceOf(ServerError);
    expect(cause).toMatchObject({ status: 503 });
    const before = server.chatRequests.length;
    // A prompt beyond the server's window is its answer, not a passing failure.
    await expect(engine.generate(update('word '.repeat(40_000)), { maxTokens: 16 })).rejects.toThrow(/maximum context length is 32768/);
    expect(server.chatRequests.length).toBe(before + 1);
  });

  it('sends the key, and says so when the server refuses it', async () => {
    const locked = await startOpenAIServer({ apiKey: 'sk-test-42' });
    try {
      await expect(createOpenAIEngine({ baseUrl: locked.url }, tok)).rejects.toThrow(/refused the API key \(HTTP 401/);
      const engine = await createOpenAIEngine({ baseUrl: locked.url, apiKey: async () => 'sk-test-42' }, tok);
      expect((await engine.generate(update(NEEDLE), { maxTokens: 32 })).text).toContain('4829137');
    } finally {
      await locked.stop();
    }
  });

  it('stops a step in flight when aborted', async () => {
    const held = await startOpenAIServer();
    try {
      const engine = await createOpenAIEngine({ baseUrl: held.url }, tok);
      const controller = new AbortController();
      // The server keeps the request unanswered: only the abort can end this step.
      const waiting = held.holdAfterNext(0);
      const step = engine.generate(update(book.slice(0, 4000)), { maxTokens: 512, signal: controller.signal });
      await waiting;
      controller.abort();
      await expect(step).rejects.toMatchObject({ name: 'AbortError' });
    } finally {
      await held.stop();
    }
  });

  it('reads a book through a failing server: every chunk once, in order, and the same memories as a clean read', async () => {
    const chunks = chunkAll(book, tok, 1000);
    const read = async (engine: OpenAIEngine) => {
      const events: RevisionEvent[] = [];
      let answer = '';
      for await (const e of memoryLoop({
        text: book,
        chunks,
        question: QUESTION,
        generator: engine,
        templates: DEFAULT_TEMPLATES,
        memoryTokens: 256,
        sampling: { temperature: 0.7, topP: 0.95 },
      })) {
        if (e.kind === 'revision') events.push(e);
        else answer = e.answer;
      }
      return { events, answer };
    };
    const clean = await read(await createOpenAIEngine({ baseUrl: server.url }, tok));

    // Every third request meets a different failure.
    const kinds: Failure[] = [{ kind: 429, retryAfter: 0 }, { kind: 500 }, { kind: 'drop' }, { kind: 'drop-mid-stream' }];
    let n = 0;
    const flaky: typeof fetch = (input, init) => {
      if (String(input).endsWith('/chat/completions') && ++n % 3 === 0) server.fail(kinds[(n / 3) % kinds.length]!);
      return fetch(input, init);
    };
    const before = server.chatRequests.length;
    const rough = await read(await createOpenAIEngine({ baseUrl: server.url }, tok, { retry: FAST, fetch: flaky }));

    expect(rough.events.map((e) => e.index)).toEqual(chunks.map((_, i) => i));
    expect(rough.events.map((e) => e.memory)).toEqual(clean.events.map((e) => e.memory));
    expect(rough.answer).toContain('4829137');
    expect(rough.answer).toBe(clean.answer);
    expect(rough.events.reduce((sum, e) => sum + (e.result.retries ?? 0), 0)).toBeGreaterThan(chunks.length / 4);
    // What the server answered in full, in order: each chunk once, then the final question.
    const served = server.chatRequests.slice(before).filter((r) => r.status === 200);
    const sections = chunks.map((c) => book.slice(c.start, c.end).slice(0, 80));
    expect(served.map((r) => r.section ?? 'final')).toEqual([...sections, 'final']);
  });
});
