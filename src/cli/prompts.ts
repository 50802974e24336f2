/**
 * The prompt set of a command-line read or evaluation: `--prompts`,
 * `--prompts-file` and `--prompts-base`, with the pinned MemAgent files kept
 * in a cache file for offline use.
 */
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import {
  APP_PROMPT_SET,
  customPromptSet,
  DEFAULT_PROMPTS_BASE,
  fetchPinnedFile,
  fileSpec,
  type FileSetId,
  identifyPromptFile,
  isFileSet,
  PROMPT_FILES,
  PROMPT_SET_LABELS,
  PromptFileError,
  type PromptFileSpec,
  type PromptRecord,
  type PromptSet,
  promptRecord,
  promptSetFromFile,
  promptsBaseProblem,
  sha256Hex,
} from '../core/prompt-sets';
import { templateProblem } from '../core/prompts';
import { needsModel } from '../engines/infos';

/** A flag's value that cannot be used: the message says what to give instead. */
/**
 * A prompt set's name inside a sentence ("…; prompts: this app's wording."):
 * the sets a phrase names start lower-case, MemAgent's keep their name.
 */
export function promptSetName(record: Pick<PromptRecord, 'set' | 'label'>): string {
  return record.set === 'app' || record.set === 'custom' ? record.label.charAt(0).toLowerCase() + record.label.slice(1) : record.label;
}

export class PromptOptionError extends Error {
  override name = 'PromptOptionError';
}

export interface PromptFlags {
  prompts?: string;
  'prompts-file'?: string;
  'prompts-base'?: string;
}

export interface PromptEnvironment {
  /** The pinned files; tests pass their stand-ins' hashes here. */
  specs?: readonly PromptFileSpec[];
  cacheDir?: string;
  fetch?: typeof fetch;
  /** Told when the set is not the one a plain run would get, and why. */
  say?(line: string): void;
}

export interface ResolvedPrompts {
  set: PromptSet;
  record: PromptRecord;
}

/** Where fetched prompt files are kept: $MEMAGENT_CACHE_DIR, else $XDG_CACHE_HOME/memagent, else ~/.cache/memagent. */
export function defaultCacheDir(): string {
  return process.env.MEMAGENT_CACHE_DIR || join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'memagent');
}

/** Where a pinned file is cached: named by its hash and file name. */
export function cachePath(dir: string, spec: { sha256: string; path: string }): string {
  return join(dir, 'prompts', `${spec.sha256}-${spec.path.split('/').pop()}`);
}

/** The cached copy of a pinned file, checked again; undefined when there is none (a damaged one is ignored). */
async function fromCache(dir: string, spec: PromptFileSpec): Promise<PromptSet | undefined> {
  const path = cachePath(dir, spec);
  if (!existsSync(path)) return undefined;
  try {
    return await promptSetFromFile(spec, readFileSync(path));
  } catch {
    return undefined;
  }
}

/** Keeps a pinned file in the cache; where there is none (a read-only home), it is fetched again next time. */
export function keep(dir: string, spec: { sha256: string; path: string }, bytes: Uint8Array): void {
  const path = cachePath(dir, spec);
  try {
    mkdirSync(dirname(path), { recursive: true });
    // Written whole, then renamed: a reader never sees half a file.
    writeFileSync(`${path}.part`, bytes);
    renameSync(`${path}.part`, path);
  } catch {
    // No cache (a read-only home): the file is simply fetched again next time.
  }
}

/** How to get a pinned file where it cannot be fetched. */
function howToGet(spec: PromptFileSpec): string {
  return (
    `Download ${DEFAULT_PROMPTS_BASE}/${spec.path} where you can and give it with --prompts-file PATH, ` +
    `or give --prompts-base URL of a mirror that serves <URL>/${spec.path}, or choose --prompts app.`
  );
}

/** A MemAgent set: from the cache, else fetched (and cached). */
async function memagentSet(set: FileSetId, flags: PromptFlags, env: Required<Omit<PromptEnvironment, 'say'>>): Promise<ResolvedPrompts> {
  const spec = fileSpec(set, env.specs);
  const cached = await fromCache(env.cacheDir, spec);
  if (cached) return { set: cached, record: promptRecord(cached, { source: `cache ${cachePath(env.cacheDir, spec)}` }) };
  const { set: fetched, url } = await fetchPinnedFile({
    spec,
    base: flags['prompts-base'] ?? DEFAULT_PROMPTS_BASE,
    fetch: env.fetch,
    timeoutMs: 20_000,
    keep: (file, bytes) => keep(env.cacheDir, file, bytes),
  });
  return { set: fetched, record: promptRecord(fetched, { source: url }) };
}

/** Edited templates from a JSON file: {"update": …, "final": …} (or the same under "templates", as in a journal or export). */
function editedTemplates(path: string): ResolvedPrompts {
  if (!existsSync(path)) throw new PromptOptionError(`There is no file ${path} (--prompts).`);
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(path, 'utf8'));
  } catch (e) {
    throw new PromptOptionError(`--prompts ${path} is not a JSON file of templates (${(e as Error).message}). Give {"update": "...", "final": "..."}.`);
  }
  const holder = (json as { templates?: unknown })?.templates ?? json;
  const { update, final } = (holder ?? {}) as { update?: unknown; final?: unknown };
  if (typeof update !== 'string' || typeof final !== 'string') {
    throw new PromptOptionError(`--prompts ${path} must hold {"update": "...", "final": "..."}: the memory update and final answer templates as strings.`);
  }
  const problem = templateProblem({ update, final });
  if (problem) throw new PromptOptionError(`--prompts ${path}: ${problem.replace(/ Use .*$/, '')}`);
  const set = customPromptSet({ update, final });
  return { set, record: promptRecord(set, { note: `templates from ${path}` }) };
}

/**
 * The set the flags choose. Without --prompts: MemAgent (paper) for a model
 * engine (fetched once, then from the cache), this app's wording where the
 * file cannot be had yet (said, and recorded) or the engine is extractive.
 */
export async function resolveCliPrompts(flags: PromptFlags, engineId: string, environment: PromptEnvironment = {}): Promise<ResolvedPrompts> {
  const env = {
    specs: environment.specs ?? PROMPT_FILES,
    cacheDir: environment.cacheDir ?? defaultCacheDir(),
    fetch: environment.fetch ?? ((input: string | URL | Request, init?: RequestInit) => fetch(input, init)),
  };
  const choice = flags.prompts?.trim();
  const base = flags['prompts-base'];
  if (base !== undefined) {
    const problem = promptsBaseProblem(base);
    if (problem) throw new PromptOptionError(`--prompts-base: ${problem}`);
  }
  if (choice !== undefined && !isFileSet(choice) && choice !== 'app' && !/\.json$/i.test(choice) && !existsSync(choice)) {
    throw new PromptOptionError(`--prompts is memagent, memagent-boxed, app or a JSON file of edited templates; got "${choice}".`);
  }

  const localFile = flags['prompts-file'];
  if (localFile !== undefined) {
    if (choice !== undefined && !isFileSet(choice))
      throw new PromptOptionError(`--prompts-file is a copy of a MemAgent file; it goes with --prompts memagent or memagent-boxed, not "${choice}".`);
    if (!existsSync(localFile)) throw new PromptOptionError(`There is no file ${localFile}.`);
    const bytes = readFileSync(localFile);
    const spec = choice ? fileSpec(choice as FileSetId, env.specs) : await identifyPromptFile(bytes, env.specs);
    if (!spec) {
      throw new PromptFileError(
        `${localFile} was refused: its SHA-256 is ${await sha256Hex(bytes)}, which is neither ${env.specs.map((s) => `${s.path.split('/').pop()} (${s.sha256})`).join(' nor ')} ` +
          `at MemAgent commit ${DEFAULT_PROMPTS_BASE.split('/').pop()!.slice(0, 7)}. Nothing of it was used.`,
        'hash',
      );
    }
    const set = await promptSetFromFile(spec, bytes);
    keep(env.cacheDir, spec, bytes);
    return { set, record: promptRecord(set, { source: `file ${localFile}` }) };
  }

  if (choice === 'app') return { set: { ...APP_PROMPT_SET }, record: promptRecord(APP_PROMPT_SET) };
  if (choice !== undefined && !isFileSet(choice)) return editedTemplates(choice);
  if (choice !== undefined) {
    try {
      return await memagentSet(choice as FileSetId, flags, env);
    } catch (e) {
      if (e instanceof PromptFileError)
        throw new PromptFileError(
          `${PROMPT_SET_LABELS[choice as FileSetId]}: ${e.message} ${e.reason === 'network' ? howToGet(fileSpec(choice as FileSetId, env.specs)) : ''}`.trim(),
          e.reason,
        );
      throw e;
    }
  }

  // Nothing chosen: the paper's prompts for a model, where the file can be had.
  if (!needsModel(engineId)) return { set: { ...APP_PROMPT_SET }, record: promptRecord(APP_PROMPT_SET) };
  try {
    return await memagentSet('memagent', flags, env);
  } catch (e) {
    if (!(e instanceof PromptFileError)) throw e;
    const note = `MemAgent (paper) was not used: ${e.message}`;
    environment.say?.(`${note} This read uses this app's wording instead. ${howToGet(fileSpec('memagent', env.specs))}`);
    return { set: { ...APP_PROMPT_SET }, record: promptRecord(APP_PROMPT_SET, { note }) };
  }
}
