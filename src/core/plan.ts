/**
 * One read plan: the settings a read is made with, their defaults, their
 * limits, and the budget an engine's window allows for them. The app's form,
 * the worker, the command line and evaluation sweeps all plan through here,
 * so that a read means the same wherever it is started.
 */
import { DEFAULT_CHUNK_TOKENS, DEFAULT_MEMORY_TOKENS, planBudget } from './budget';
import { templateOverhead } from './prompts';

/** The settings of one read. */
export interface ReadSettings {
  /** Chunk size asked for, in tokens: the budget may allow less (see ReadPlan). */
  chunkTokens: number;
  /** Memory cap M in tokens; a reply becomes the next memory, so it caps replies too. */
  memoryTokens: number;
  temperature: number;
  topP: number;
  /** Sampling seed; absent for a random one. */
  seed?: number;
}

export type ReadSettingName = keyof ReadSettings;

/** The paper's settings: 5000-token chunks, a 1024-token memory, sampling at temperature 0.7 and top_p 0.95. */
export const DEFAULT_READ_SETTINGS: Readonly<ReadSettings> = Object.freeze({
  chunkTokens: DEFAULT_CHUNK_TOKENS,
  memoryTokens: DEFAULT_MEMORY_TOKENS,
  temperature: 0.7,
  topP: 0.95,
});

const NAMES: readonly ReadSettingName[] = ['chunkTokens', 'memoryTokens', 'temperature', 'topP', 'seed'];

/** The read settings among `given` (other keys left behind), with the defaults wherever one is absent. */
export function readSettings(given: Partial<Record<ReadSettingName, number | null | undefined>> = {}): ReadSettings {
  const out: ReadSettings = { ...DEFAULT_READ_SETTINGS };
  for (const name of NAMES) {
    const value = given[name];
    if (value !== undefined && value !== null) out[name] = value;
  }
  return out;
}

/** The largest seed: what every engine takes (a signed 32-bit integer). */
export const MAX_SEED = 2 ** 31 - 1;

/** The range each setting may take, inclusive; top p must also be above 0. */
export const READ_LIMITS: Readonly<Record<ReadSettingName, { min: number; max: number; whole: boolean }>> = {
  chunkTokens: { min: 100, max: 100_000, whole: true },
  memoryTokens: { min: 64, max: 8192, whole: true },
  temperature: { min: 0, max: 2, whole: false },
  topP: { min: 0, max: 1, whole: false },
  seed: { min: 0, max: MAX_SEED, whole: true },
};

/** What is wrong with one setting, said so that the person can fix it. */
export interface SettingProblem {
  setting: ReadSettingName;
  message: string;
}

const MESSAGES: Record<ReadSettingName, string> = {
  chunkTokens: 'The chunk size must be a whole number of tokens from 100 to 100,000.',
  memoryTokens: 'The memory size must be a whole number of tokens from 64 to 8,192.',
  temperature: 'The temperature must be a number from 0 to 2.',
  topP: 'Top p must be a number above 0 and at most 1.',
  seed: 'The seed must be a whole number from 0 to 2,147,483,647; leave it out for a random one.',
};

/** The first setting out of its range, or null when every one is fine. Absent settings are fine: they take the defaults. */
export function readSettingsProblem(s: Partial<Record<ReadSettingName, number | null | undefined>>): SettingProblem | null {
  for (const setting of NAMES) {
    const value = s[setting];
    if (value === undefined || value === null) continue;
    const { min, max, whole } = READ_LIMITS[setting];
    const fits = Number.isFinite(value) && value >= min && value <= max && (!whole || Number.isInteger(value)) && !(setting === 'topP' && value === 0);
    if (!fits) return { setting, message: MESSAGES[setting] };
  }
  return null;
}

/**
 * InfMem's read (docs/infmem.md): before each chunk a planner searches the
 * whole book or votes to stop, and `earlyStop` votes in a row end the read.
 * Chunks of 5,000 tokens and replies of 1,024 are fixed by the method.
 */
export interface InfmemMethod {
  kind: 'infmem';
  /** Votes to stop in a row that end the read. */
  earlyStop: number;
  /** Two-stage thinking for a model's calls (the extractive engine has none to make). */
  thinking: boolean;
}

/** The largest early stop the form and the worker take: a vote a chunk, so more only matters for books of that many chunks. */
export const MAX_EARLY_STOP = 100;

/** What is wrong with an InfMem method, said so that the person can fix it; null when it is fine. */
export function infmemProblem(method: InfmemMethod): string | null {
  const n = method.earlyStop;
  return Number.isInteger(n) && n >= 1 && n <= MAX_EARLY_STOP ? null : `"Stop after N votes" must be a whole number from 1 to ${MAX_EARLY_STOP}.`;
}

/** What a read was planned with: its settings and the budget the engine's window allows. Stored with each run. */
export interface ReadPlan extends ReadSettings {
  /** The chunk size asked for; `chunkTokens` is what the budget allowed. */
  requestedChunkTokens: number;
  /** Context the plan needs: what an engine with a configurable window should allocate. */
  contextTokens: number;
}

/** What the plan must leave room for in each request. */
export interface PlanRoom {
  /** Tokens the engine holds in one request, prompt and reply together. */
  contextWindow: number;
  count(text: string): number;
  /** The memory-update template, whose fixed text every step carries. */
  updateTemplate: string;
  /** The longest question the plan serves. */
  questionTokens: number;
}

/** Settings and an engine's window → the read's plan; throws BudgetError when no chunk fits. */
export function planRead(settings: ReadSettings, room: PlanRoom): ReadPlan {
  const budget = planBudget({
    contextWindow: room.contextWindow,
    templateTokens: templateOverhead(room.updateTemplate, room.count),
    questionTokens: room.questionTokens,
    memoryTokens: settings.memoryTokens,
    requestedChunkTokens: settings.chunkTokens,
  });
  return {
    requestedChunkTokens: settings.chunkTokens,
    chunkTokens: budget.chunkTokens,
    memoryTokens: budget.memoryTokens,
    contextTokens: budget.contextTokens,
    temperature: settings.temperature,
    topP: settings.topP,
    ...(settings.seed !== undefined && { seed: settings.seed }),
  };
}

/**
 * The sampling seed of the question at `index` (from 0) in a read of several
 * that was given `seed`: the read's own for the first, so that a read of one
 * question samples as it always has; for each other a hash of the two (a
 * murmur3 finalizer over the seed and the index), from 0 to MAX_SEED. So
 * every question draws its own random stream, and the same read draws the
 * same streams again.
 */
export function questionSeed(seed: number, index: number): number {
  if (index === 0) return seed;
  let h = Math.imul(seed ^ 0x9e3779b9, 0x85ebca6b) ^ Math.imul(index, 0xc2b2ae35);
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 1;
}

/** A read's plan as its question at `index` reads with it: its own seed, where the read has one (see questionSeed). */
export function questionPlan<T extends { seed?: number }>(plan: T, index: number): T {
  return plan.seed === undefined ? plan : { ...plan, seed: questionSeed(plan.seed, index) };
}
