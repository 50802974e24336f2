/**
 * Where an InfMem read's steps come from: the extractive engine's fixed
 * rules, or a model through the official prompts, continued as raw
 * completions by a server or by WebLLM on this machine's GPU, in the chat
 * text of the model's family. Each says how the read names it and what its
 * journal records of it, so that a resume continues with the same.
 */
import { abortable } from '../core/abort';
import { type InfmemSteps, modelSteps, tellingTies } from '../core/infmem/loop';
import { INFMEM_FILES } from '../core/infmem/official-files';
import type { InfmemDocument } from '../core/infmem/retrieval';
import type { RawCompleter } from '../core/infmem/thinking';
import { extractiveInfmemSteps } from '../engines/extractive/infmem-steps';
import { openAIConfig } from '../engines/openai/http';
import { openRawCompletions } from '../engines/openai/completions';
import type { QwenTokenizer } from '../engines/qwen-tokenizer';
import { chatFamilyOf, type ModelEntry } from '../engines/webllm/models/models';
import { QWEN25_DEFAULT_SYSTEM } from '../engines/webllm/models/system-message';
import { seconds } from './engine';
import { describeGpuEngine, type GpuFlags, loadGpuEngine, openGpuEngine } from './gpu-engine';
import { wholeNumber } from './flags';
import { type InfmemFileEnvironment, type InfmemFileFlags, resolveInfmemPrompts } from './infmem-files';
import { familyName, type InfmemChat, type InfmemJournalHeader, type InfmemReadSettings } from './infmem-journal';

/** What InfMem needs of a WebLLM engine: its model, its raw completions, and a load with the window a request needs. */
export interface InfmemGpuEngine {
  model: ModelEntry;
  completer?: RawCompleter;
  /** The system message its chat requests carry (the model's own default), for Qwen2.5's chat text. */
  systemMessage?: string | undefined;
  prepare?(contextTokens: number): Promise<void>;
}

export interface InfmemReaderEnvironment extends InfmemFileEnvironment {
  /** Opens `--engine webllm`'s engine: on this machine's GPU through Dawn unless given. */
  openGpu?: (flags: GpuFlags, say: (line: string) => void) => Promise<InfmemGpuEngine>;
}

/**
 * The window WebLLM is loaded with before the first request: a writer's
 * request holds a 5,000-token chunk, four retrieved units of up to 500, the
 * memory and the history, then up to 1,024 tokens of thought and 1,024 of
 * reply. A longer request reloads the model with a larger window.
 */
export const INFMEM_WEBLLM_WINDOW = 12_288;

/** What the read's steps come from, and what its journal records of it. */
export interface StepsReader {
  about: string;
  identity: InfmemJournalHeader['engine'];
  chat?: InfmemChat;
  files?: InfmemJournalHeader['files'];
  steps(signal: AbortSignal): InfmemSteps;
  /** Said after the read's time: the requests it sent, where it sent any. */
  requests(): string;
}

export function extractiveReader(document: InfmemDocument, tokenizer: QwenTokenizer): StepsReader {
  return {
    about: 'the extractive engine (fixed rules, no model: a stand-in for the planner and writer)',
    identity: { id: 'extractive' },
    steps: () => extractiveInfmemSteps(document, tokenizer),
    requests: () => '',
  };
}

/** A model's raw completions, the chat text it was trained on, and how the read names it. */
interface Completions {
  completer: RawCompleter;
  chat: InfmemChat;
  identity: InfmemJournalHeader['engine'];
  about: string;
  requests(): string;
}

/** The flags a model's read takes: the server's, WebLLM's and the pinned files'. */
export type ModelFlags = GpuFlags &
  InfmemFileFlags & { 'base-url'?: string; model?: string; 'api-key'?: string; retries?: string; 'retry-delay'?: string; engine?: string };

/** How a model is read with: its settings, the chat family asked for (or kept by the journal), and the most requests at once. */
export interface ModelChoice {
  settings: InfmemReadSettings;
  /** The family a server's requests are rendered in; undefined: Qwen3's, as the official code renders them. */
  family?: InfmemChat['family'];
  /** With several questions against a server: at most this many requests in flight at once. */
  atOnce?: number;
}

/** Qwen2.5's chat text, with its default system message where a request has none; or Qwen3's. */
function chatOf(family: InfmemChat['family'], own?: string): InfmemChat {
  return family === 'qwen3' ? { family } : { family, defaultSystem: own || QWEN25_DEFAULT_SYSTEM };
}

async function serverCompletions(v: ModelFlags, environment: InfmemReaderEnvironment, say: (line: string) => void, choice: ModelChoice): Promise<Completions> {
  const retries = wholeNumber('retries', v.retries);
  const delay = wholeNumber('retry-delay', v['retry-delay']);
  const config = openAIConfig(
    { baseUrl: v['base-url']!, ...(v.model && { model: v.model }) },
    v['api-key'] ?? process.env.MEMAGENT_API_KEY ?? process.env.OPENAI_API_KEY,
  );
  const server = await openRawCompletions(config, {
    ...(environment.fetch && { fetch: environment.fetch }),
    retry: { ...(retries !== undefined && { maxRetries: retries }), ...(delay !== undefined && { baseDelayMs: delay }) },
    onRetry: (n) => say(`  ${n.reason} Retrying in ${seconds(n.delayMs)} (retry ${n.attempt}).`),
    onChatFallback: say,
  });
  // InfMem's released model is a Qwen3, and the official code renders Qwen3's template; a Qwen2.5 model is named with --chat.
  const family = choice.family ?? 'qwen3';
  if (!choice.family && /qwen-?2\.5|memagent/i.test(server.model))
    say(`The model's name, ${server.model}, suggests Qwen2.5: its requests are rendered in Qwen3's chat text unless --chat qwen2.5 is given.`);
  const atOnce = choice.atOnce;
  return {
    completer: atOnce ? atMost(server.completer, atOnce) : server.completer,
    chat: chatOf(family),
    identity: { id: 'openai', model: server.model, baseUrl: server.baseUrl },
    about: `${server.model} at ${server.baseUrl}, ${familyName(family)} chat text`,
    requests: () =>
      ` with ${server.stats.requests.toLocaleString('en')} requests${server.stats.endpoint === 'chat' ? ' to the chat endpoint (not raw completions)' : ''}`,
  };
}

/**
 * A completer that sends at most `limit` requests at once; the others wait
 * their turn in order (or leave, stopped). A request that ends hands its
 * place to the next in line, so none can slip in between.
 */
export function atMost(completer: RawCompleter, limit: number): RawCompleter {
  let running = 0;
  const waiting: (() => void)[] = [];
  return {
    complete: async (request) => {
      if (running < limit) running++;
      else
        await abortable<void>(request.signal, (resolve) => {
          waiting.push(resolve);
          return () => {
            const at = waiting.indexOf(resolve);
            if (at >= 0) waiting.splice(at, 1);
          };
        });
      try {
        return await completer.complete(request);
      } finally {
        const next = waiting.shift();
        if (next) next();
        else running--;
      }
    },
  };
}

/** WebLLM on this machine's GPU: the model's own chat family (a Qwen3 library means Qwen3's), loaded before the first request. */
async function webllmCompletions(v: ModelFlags, environment: InfmemReaderEnvironment, say: (line: string) => void): Promise<Completions> {
  const engine = await (environment.openGpu ?? openGpuEngine)(v, say);
  const own = engine.completer;
  if (!own) throw new Error(`${engine.model.label} cannot continue a prompt as it is (no raw completions in this WebLLM build).`);
  const family = chatFamilyOf(engine.model);
  // A Qwen2.5 model's chat text opens with its default system message when a request has none.
  const chat = chatOf(family, engine.systemMessage);
  await loadGpuEngine(engine, INFMEM_WEBLLM_WINDOW, say);
  let sent = 0;
  return {
    completer: {
      complete: (request) => {
        sent++;
        return own.complete(request);
      },
    },
    chat,
    identity: { id: 'webllm', model: engine.model.id },
    about: `${describeGpuEngine(engine) ?? `model ${engine.model.label} on WebLLM`}, ${familyName(family)} chat text`,
    requests: () => ` with ${sent.toLocaleString('en')} requests`,
  };
}

/** Said once on stderr where a read's requests depart from the official code's. */
const INERT_NOTE =
  'Chat-template control strings (<|im_start|>, <think>, <tool_call> …) in the book, the question or the memory were made inert before they were sent; the official code sends them as they are.';
const TIE_NOTE =
  "A search's four passages were cut inside a tie of equal BM25 scores: ties go by place in the book here, and the official code, whose ties fall as its hardware orders them, may have retrieved others.";

/** A model's read: the pinned files' prompts, rendered in its chat text and continued by the server or WebLLM. */
export async function modelReader(v: ModelFlags, environment: InfmemReaderEnvironment, say: (line: string) => void, choice: ModelChoice): Promise<StepsReader> {
  const { thinking, temperature, topP } = choice.settings;
  const prompts = await resolveInfmemPrompts(v, environment);
  const model = v.engine === 'webllm' ? await webllmCompletions(v, environment, say) : await serverCompletions(v, environment, say, choice);
  const specs = environment.specs ?? INFMEM_FILES;
  const said = new Set<string>();
  const once = (line: string) => {
    if (!said.has(line)) say(line);
    said.add(line);
  };
  return {
    about: `thinking ${thinking ? 'on' : 'off'}; ${model.about}; prompts: ${prompts.sources.infmem}, function calls: ${prompts.sources.fncall}`,
    identity: model.identity,
    chat: model.chat,
    files: { infmem: specs.infmem.sha256, fncall: specs.fncall.sha256 },
    // A book is untrusted: its control strings go inert. Said once each: where the requests are not the official code's.
    steps: (signal) =>
      tellingTies(
        modelSteps({
          ...prompts,
          completer: model.completer,
          chat: model.chat,
          thinking,
          temperature,
          topP,
          signal,
          verbatim: false,
          onInert: () => once(INERT_NOTE),
        }),
        () => once(TIE_NOTE),
      ),
    requests: model.requests,
  };
}
