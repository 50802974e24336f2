import type { EngineInfo } from './engine';
import { EXTRACTIVE_INFO } from './extractive/info';
import { OPENAI_INFO } from './openai/info';
import { WEBLLM_INFO } from './webllm/models/models';
import { WLLAMA_INFO } from './wllama/models';

/**
 * Every engine the app offers, in the order the Engine combobox lists them,
 * with what each can do. Metadata only (no runtime), so the page reads it as
 * the worker and the CLI do; `registry.ts` opens the engines themselves.
 */
export const ENGINES: readonly EngineInfo[] = [EXTRACTIVE_INFO, OPENAI_INFO, WEBLLM_INFO, WLLAMA_INFO];

/** The engine with this id; undefined for one the app does not know. */
export function engineInfo(engineId: string): EngineInfo | undefined {
  return ENGINES.find((e) => e.id === engineId);
}

/** Whether runs on this engine read with a model (and so with prompts); an unknown engine is taken to. */
export function needsModel(engineId: string): boolean {
  return engineInfo(engineId)?.needsModel ?? true;
}

/**
 * The engine whose tokenizer counts a book as it is imported: one that needs
 * no model or server, so an import never waits on a download or a connection,
 * and the model-free one where there is a choice (the same vocabulary, nothing
 * else to load). A run on another engine recounts with its own.
 */
export function importTokenizerEngine(engines: readonly EngineInfo[] = ENGINES): string {
  const standalone = engines.filter((e) => e.standaloneTokenizer);
  return (standalone.find((e) => !e.needsModel) ?? standalone[0] ?? EXTRACTIVE_INFO).id;
}
