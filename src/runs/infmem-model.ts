/**
 * A model's part in InfMem's reads, one for a run and an evaluation alike:
 * the check made before anything is stored (an engine that continues a
 * prompt the app renders, and InfMem's two pinned files, kept or fetched
 * now), and the steps over the engine's raw completions with the kept files'
 * prompts, in the model's chat text, with two-stage thinking or not.
 */
import { type InfmemSteps, modelSteps } from '../core/infmem/loop';
import { InfmemFileError } from '../core/infmem/official-files';
import { CHUNK_TOKENS, RETRIEVED_UNITS, UNIT_TOKENS } from '../core/infmem/retrieval';
import { type RawCompleter, REPLY_TOKENS, THINK_TOKENS } from '../core/infmem/thinking';
import type { Engine } from '../engines/engine';
import { RequestError } from '../jobs/request-error';
import type { InfmemFileLibrary, InfmemPromptsInUse } from './infmem-files';
import type { InfmemChat } from './infmem-chat';

export interface InfmemPromptsInput {
  engine: Engine;
  engineId: string;
  files?: Pick<InfmemFileLibrary, 'prompts'>;
  /** What the person can do instead, ending each refusal ("read with MemAgent"). */
  otherwise: string;
  /** Said after why the files cannot be had: where on the page to get them. */
  filesHint?: string;
}

/**
 * InfMem's prompts for a model's read: the kept files, else fetched now. An
 * engine that takes chat messages only is refused, and files that cannot be
 * had are refused with how to get them (a RequestError either way).
 */
export async function infmemPromptsFor({ engine, engineId, files, otherwise, filesHint }: InfmemPromptsInput): Promise<InfmemPromptsInUse> {
  if (!engine.completer) throw new RequestError(`InfMem sends prompts it renders itself, and the ${engineId} engine takes chat messages only: ${otherwise}.`);
  if (!files) throw new RequestError(`InfMem's prompt files cannot be fetched or kept here: ${otherwise}.`);
  try {
    return await files.prompts();
  } catch (e) {
    if (e instanceof InfmemFileError) throw new RequestError(filesHint ? `${e.message} ${filesHint}` : e.message);
    throw e;
  }
}

export interface InfmemModelStepsInput {
  engine: Engine;
  prompts: InfmemPromptsInUse;
  chat: InfmemChat;
  thinking: boolean;
  temperature: number;
  topP: number;
  /** A bound on the question's tokens, for the room the engine is prepared with. */
  questionTokens: number;
  signal: AbortSignal;
  /** Told once, at the first reply a server gave at its chat endpoint (it has no raw completions). */
  onChatEndpoint?(): Promise<void>;
  /** As the core's modelSteps: the texts as they are (a dataset evaluation), or their control strings made inert (a read). */
  verbatim: boolean;
  /** Told once, before the first request in which a control string was made inert. */
  onInert?(): Promise<void>;
}

/**
 * A model's steps: the engine prepared once with room for the writer's
 * request, then each official prompt rendered in the chat text and continued
 * by the engine's raw completer.
 */
export async function infmemModelSteps(input: InfmemModelStepsInput): Promise<InfmemSteps> {
  const { engine, prompts, signal } = input;
  const raw = engine.completer;
  if (!raw) throw new RequestError(`InfMem sends prompts it renders itself, and the ${engine.id} engine takes chat messages only.`);
  // An engine whose window is set at load (WebLLM) loads once with room for the writer's request (chunk, passages,
  // memory, thought and reply) rather than growing request by request; only a long search history needs more.
  const writer = CHUNK_TOKENS + RETRIEVED_UNITS * UNIT_TOKENS + REPLY_TOKENS + THINK_TOKENS + REPLY_TOKENS;
  await engine.prepare?.(writer + engine.tokenizer.count(prompts.templates.writer) + input.questionTokens, signal);
  let told = !input.onChatEndpoint;
  const completer: RawCompleter = {
    complete: async (request) => {
      const result = await raw.complete(request);
      if (result.endpoint === 'chat' && !told) {
        told = true;
        await input.onChatEndpoint?.();
      }
      return result;
    },
  };
  let inertTold = !input.onInert;
  return modelSteps({
    verbatim: input.verbatim,
    onInert: async () => {
      if (inertTold) return;
      inertTold = true;
      await input.onInert?.();
    },
    templates: prompts.templates,
    toolSystem: prompts.toolSystem,
    completer,
    chat: input.chat,
    thinking: input.thinking,
    temperature: input.temperature,
    topP: input.topP,
    signal,
  });
}
