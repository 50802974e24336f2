import type { Tokenizer } from '../core/tokenizer';
import type { Engine, EngineInfo } from './engine';
import { EXTRACTIVE_INFO, ExtractiveEngine } from './extractive';
import { loadQwenTokenizer } from './qwen-tokenizer';

/** Every engine the app offers, in the order the Engine combobox lists them. */
export const ENGINES: readonly EngineInfo[] = [EXTRACTIVE_INFO];

export async function tokenizerFor(engineId: string): Promise<Tokenizer> {
  if (engineId === EXTRACTIVE_INFO.id) return loadQwenTokenizer();
  throw new Error(`Unknown engine "${engineId}".`);
}

export async function createEngine(engineId: string): Promise<Engine> {
  if (engineId === EXTRACTIVE_INFO.id) return new ExtractiveEngine(await tokenizerFor(engineId));
  throw new Error(`Unknown engine "${engineId}". Choose one of: ${ENGINES.map((e) => e.label).join(', ')}.`);
}
