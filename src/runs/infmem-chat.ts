/**
 * Which chat text an InfMem read renders its prompts in, decided from what the
 * engine knows of its model: Qwen2.5's, with the model's default system
 * message, for a Qwen2.5 model (and MemAgent's fine-tunes of it); Qwen3's
 * otherwise, the released InfMem checkpoint's backbone, which is also what a
 * server is taken to serve when its model's name says nothing, as the command
 * line does.
 */
import type { ChatTextOptions } from '../core/infmem/chat-text';
import type { Engine, EngineConfig } from '../engines/engine';
import { QWEN25_DEFAULT_SYSTEM } from '../engines/webllm/models/system-message';

export type InfmemChat = Pick<ChatTextOptions, 'family' | 'defaultSystem'>;

/** Every name the engine and the run's config give its model: a server's model id, a WebLLM model's id and files, a GGUF's address or file name. */
export function modelNames(engine: Engine, config?: EngineConfig): string {
  const probe = engine as { model?: unknown; settings?: { source?: { url?: string; name?: string } } };
  const model = probe.model as string | { id?: string; modelUrl?: string } | undefined;
  const names = [
    ...Object.values(config ?? {}).filter((v): v is string => typeof v === 'string'),
    ...(typeof model === 'string' ? [model] : [model?.id, model?.modelUrl]),
    probe.settings?.source?.url,
    probe.settings?.source?.name,
  ];
  return names.filter((n): n is string => !!n).join(' ');
}

/** The chat text of the engine's model (see the file's comment); `family`, where given, is kept (a resume renders as its read began). */
export function infmemChat(engine: Engine, config?: EngineConfig, family?: InfmemChat['family']): InfmemChat {
  if ((family ?? (/qwen-?2\.5|memagent/i.test(modelNames(engine, config)) ? 'qwen2.5' : 'qwen3')) === 'qwen3') return { family: 'qwen3' };
  // The model's own default, where the engine read it from the model's template (WebLLM does); else Qwen2.5's.
  const own = (engine as { systemMessage?: unknown }).systemMessage;
  return { family: 'qwen2.5', defaultSystem: typeof own === 'string' && own ? own : QWEN25_DEFAULT_SYSTEM };
}
