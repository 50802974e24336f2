import type { Tokenizer } from '../../core/tokenizer';
import { EngineSettingsError, ServerError } from '../errors';
import { explainFailure, listenForPolicyRefusals } from './diagnose';
import { headersFor, httpError, normalizeBaseUrl, type OpenAIConfig, positiveInt, serverRoot } from './http';

/** Connecting to a server: its models, the context window and how it counts tokens, checked before anything is read. */

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

/** Prose with numbers, punctuation and a few non-ASCII letters, to compare the server's token counts with ours. */
const CALIBRATION_TEXT = `The harbour was quiet when the ferry came in at 6:45, three hours late. Nobody on the pier seemed surprised; the captain's log, which later went to the archive in Lisbon, blamed "a wind from nowhere" and a broken compass. Passengers stepped off carrying baskets, umbrellas and, in one case, a cello wrapped in a blanket.

Chapter 12 of the report lists 1,284 crossings between 1921 and 1937. Most took ninety minutes. Some took a whole day! Why? The author suggests fog, strikes, and the café owner's habit of holding the last boat until his friends had finished their coffee — a story that is probably true.

Naïve readers may think these delays were rare. They were not: about one crossing in seven ran late, and the résumé of the harbour master, appended to the report, mentions his "patience with the sea and impatience with everything else."`;

/** GET /models: the models served and, where the server says (vLLM's max_model_len), their context windows. */
export async function listModels(config: OpenAIConfig, fetchImpl: typeof fetch = fetch): Promise<{ baseUrl: string; models: ServerModel[] }> {
  let baseUrl = normalizeBaseUrl(config.baseUrl);
  listenForPolicyRefusals();
  const get = async (base: string) => {
    const url = `${base}/models`;
    let res: Response;
    try {
      res = await fetchImpl(url, { headers: await headersFor(config, false) });
    } catch (error) {
      throw await explainFailure({ error, baseUrl: base, fetchImpl, checkCors: true });
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
  let body: { data?: { id?: unknown; max_model_len?: unknown; context_length?: unknown }[] };
  try {
    body = (await res.json()) as typeof body;
  } catch (e) {
    throw new ServerError(`${url} did not answer with JSON: is this an OpenAI-compatible server?`, res.status, undefined, { cause: e });
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

interface CountRequest {
  config: OpenAIConfig;
  baseUrl: string;
  model: string;
  fetchImpl: typeof fetch;
}

/** A token count from the server's /tokenize (vLLM: {prompt} or {messages}; llama.cpp: {content}), or null where it has none. */
async function serverCount({ config, baseUrl, model, fetchImpl }: CountRequest, body: Record<string, unknown>): Promise<number | null> {
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
    // A server without a usable /tokenize: prompts are sized with the local tokenizer and a margin instead.
    return null;
  }
}

/** Compares the server's counts with the local tokenizer's on one sample, to size prompts in the server's tokens. */
async function measureCounts(request: CountRequest, tokenizer: Tokenizer): Promise<TokenCounts> {
  const plain = await serverCount(request, { prompt: CALIBRATION_TEXT, content: CALIBRATION_TEXT, add_special_tokens: false });
  if (plain === null) return { source: 'local', ratio: LOCAL_MARGIN, templateTokens: LOCAL_TEMPLATE_TOKENS };
  const chat = await serverCount(request, { messages: [{ role: 'user', content: CALIBRATION_TEXT }], add_generation_prompt: true });
  return {
    source: 'server',
    ratio: Math.max(1, plain / tokenizer.count(CALIBRATION_TEXT)),
    templateTokens: chat === null ? LOCAL_TEMPLATE_TOKENS : Math.max(0, chat - plain),
  };
}

/** Checks the server, picks the model and its context window, and measures how the server counts tokens. */
export async function connectServer(config: OpenAIConfig, tokenizer: Tokenizer, fetchImpl: typeof fetch = fetch): Promise<ServerInfo> {
  const { baseUrl, models } = await listModels(config, fetchImpl);
  const wanted = config.model?.trim();
  const chosen = wanted ? models.find((m) => m.id === wanted) : models[0];
  if (!chosen) {
    throw new EngineSettingsError(`The server does not serve "${wanted}". It serves: ${models.map((m) => m.id).join(', ')}.`);
  }
  const entered = positiveInt(config.contextWindow);
  const reported = chosen.maxModelLen;
  const window = entered && reported ? Math.min(entered, reported) : (entered ?? reported);
  if (!window) {
    throw new EngineSettingsError(
      `The server does not say how many tokens "${chosen.id}" holds. Enter its context window (the size it was started with, e.g. Ollama's num_ctx).`,
    );
  }
  const counts = await measureCounts({ config, baseUrl, model: chosen.id, fetchImpl }, tokenizer);
  return { baseUrl, model: chosen.id, models, serverContextWindow: window, counts };
}
