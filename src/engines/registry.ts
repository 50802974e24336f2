import type { Tokenizer } from '../core/tokenizer';
import type { Engine, EngineConfig, EngineInfo } from './engine';
import { EXTRACTIVE_INFO, ExtractiveEngine } from './extractive';
import { loadQwenTokenizer } from './qwen-tokenizer';

/**
 * One entry per runtime. A new engine adds an entry here and its own file;
 * heavy runtimes are imported inside `create`, so they load only when used.
 */
interface EngineEntry {
  info: EngineInfo;
  create(config?: EngineConfig): Promise<Engine>;
  /** The tokenizer runs on this engine are chunked with. */
  tokenizer(config?: EngineConfig): Promise<Tokenizer>;
}

const ENTRIES: readonly EngineEntry[] = [
  {
    info: EXTRACTIVE_INFO,
    create: async () => new ExtractiveEngine(await loadQwenTokenizer()),
    tokenizer: () => loadQwenTokenizer(),
  },
];

/** Every engine the app offers, in the order the Engine combobox lists them. */
export const ENGINES: readonly EngineInfo[] = ENTRIES.map((e) => e.info);

function entry(engineId: string): EngineEntry {
  const found = ENTRIES.find((e) => e.info.id === engineId);
  if (!found) throw new Error(`Unknown engine "${engineId}". Choose one of: ${ENGINES.map((e) => e.label).join(', ')}.`);
  return found;
}

export function createEngine(engineId: string, config?: EngineConfig): Promise<Engine> {
  return entry(engineId).create(config);
}

export function tokenizerFor(engineId: string, config?: EngineConfig): Promise<Tokenizer> {
  return entry(engineId).tokenizer(config);
}
