/**
 * The command line's flags: how they are parsed and checked. A flag that
 * cannot be used is a UsageError, which main.ts prints with exit code 2.
 */
import { type ParseArgsOptionsConfig, parseArgs } from 'node:util';
import { type ReadSettingName, type ReadSettings, readSettingsProblem } from '../core/plan';

/** A command line that cannot be run as given: the message says what to change. */
export class UsageError extends Error {
  override name = 'UsageError';
}

/** The flags of both commands: which server or engine, and which prompts. */
const COMMON_OPTIONS = {
  prompts: { type: 'string' },
  'prompts-file': { type: 'string' },
  'prompts-base': { type: 'string' },
  'base-url': { type: 'string' },
  model: { type: 'string' },
  'api-key': { type: 'string' },
  context: { type: 'string' },
  retries: { type: 'string' },
  'retry-delay': { type: 'string' },
  engine: { type: 'string' },
  'model-url': { type: 'string' },
  'model-lib': { type: 'string' },
  'cache-dir': { type: 'string' },
  webllm: { type: 'string' },
  speculate: { type: 'string' },
  chunk: { type: 'string' },
  memory: { type: 'string' },
  temperature: { type: 'string' },
  'top-p': { type: 'string' },
  progress: { type: 'string' },
  quiet: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** The common flags and a command's own; an unknown flag or a missing value is a usage error. */
export function parseFlags<T extends ParseArgsOptionsConfig>(argv: string[], options: T) {
  try {
    return parseArgs({ args: argv, options: { ...COMMON_OPTIONS, ...options }, allowPositionals: true, strict: true });
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
}

export function wholeNumber(name: string, value: string | undefined, min = 0): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (value.trim() === '' || !Number.isInteger(n) || n < min) {
    throw new UsageError(`--${name} must be a whole number${min ? ` of at least ${min}` : ''}, got "${value}".`);
  }
  return n;
}

function number(name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n)) throw new UsageError(`--${name} must be a number, got "${value}".`);
  return n;
}

/** The flag that sets each read setting. */
export const SETTING_FLAGS: Readonly<Record<ReadSettingName, string>> = {
  chunkTokens: 'chunk',
  memoryTokens: 'memory',
  temperature: 'temperature',
  topP: 'top-p',
  seed: 'seed',
};

type SettingFlagValues = { chunk?: string; memory?: string; temperature?: string; 'top-p'?: string; seed?: string };

/**
 * The read settings the flags give (absent ones left out, for the plan's
 * defaults), checked against the same limits as the app's Read form.
 * `seed` is left to the caller where the command gives the flag another meaning.
 */
export function settingsFlags(v: SettingFlagValues, options: { seed: boolean }): Partial<ReadSettings> {
  const given: Partial<ReadSettings> = {};
  for (const [setting, flag] of Object.entries(SETTING_FLAGS) as [ReadSettingName, keyof SettingFlagValues][]) {
    if (setting === 'seed' && !options.seed) continue;
    const value = number(flag, v[flag]);
    if (value !== undefined) given[setting] = value;
  }
  const wrong = readSettingsProblem(given);
  if (wrong)
    throw new UsageError(`--${SETTING_FLAGS[wrong.setting]} ${v[SETTING_FLAGS[wrong.setting] as keyof SettingFlagValues]} cannot be used. ${wrong.message}`);
  return given;
}
