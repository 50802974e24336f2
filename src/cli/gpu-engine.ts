/**
 * `--engine webllm` on the command line: the app's WebLLM engine on this
 * machine's own GPU through Dawn (src/engines/webllm/node). Models are
 * downloaded by the app's downloader into a cache folder — resumable, with
 * the same retries and hosts as in the browser — and loaded from there, with
 * no network, every time after. The folder's models.json remembers which
 * models were fetched, for `memagent models`.
 */
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { Engine, EngineConfig } from '../engines/engine';
import type { WebLLMEngine } from '../engines/webllm/engine';
import {
  cleanModelUrl,
  customModelProblem,
  DEFAULT_MODEL_ID,
  engineConfigFor,
  type ModelEntry,
  onModelProgress,
  QWEN_CONTEXT_LIMIT,
} from '../engines/webllm/models/models';
import { NodeWebLLM, type NodeWebLLMOptions } from '../engines/webllm/node/runtime';
import { SHIPPED_WEBLLM, versionForLibrary, WEBLLM_VERSIONS, webllmVersion, type WebLLMVersion } from '../engines/webllm/versions';
import { UsageError } from './flags';

export interface GpuFlags {
  model?: string;
  'model-url'?: string;
  'model-lib'?: string;
  'cache-dir'?: string;
  webllm?: string;
  context?: string;
  speculate?: string;
}

/** Where models are kept: --cache-dir, MEMAGENT_CACHE_DIR, or the user's cache folder. */
export function cacheDirOf(flags: Pick<GpuFlags, 'cache-dir'>, env: Record<string, string | undefined> = process.env): string {
  if (flags['cache-dir']) return flags['cache-dir'];
  if (env.MEMAGENT_CACHE_DIR) return env.MEMAGENT_CACHE_DIR;
  const base =
    process.platform === 'win32'
      ? (env.LOCALAPPDATA ?? join(homedir(), 'AppData', 'Local'))
      : process.platform === 'darwin'
        ? join(homedir(), 'Library', 'Caches')
        : (env.XDG_CACHE_HOME ?? join(homedir(), '.cache'));
  return join(base, 'memagent', 'webllm');
}

/** A model fetched into the cache folder, as models.json keeps it. */
export interface CachedModel {
  id: string;
  label: string;
  modelUrl: string;
  libUrl: string;
  /** The WebLLM version whose file names and runtime it was fetched for. */
  webllm: string;
  contextLimit?: number;
  custom: boolean;
  addedAt: string;
}

export class ModelList {
  readonly path: string;
  constructor(readonly dir: string) {
    this.path = join(dir, 'models.json');
  }

  all(): CachedModel[] {
    if (!existsSync(this.path)) return [];
    try {
      const v = JSON.parse(readFileSync(this.path, 'utf8')) as { models?: CachedModel[] };
      return Array.isArray(v.models) ? v.models : [];
    } catch {
      return [];
    }
  }

  private write(models: CachedModel[]): void {
    writeFileSync(`${this.path}.tmp`, `${JSON.stringify({ models }, null, 2)}\n`);
    renameSync(`${this.path}.tmp`, this.path);
  }

  remember(entry: ModelEntry, webllm: WebLLMVersion): void {
    const others = this.all().filter((m) => !(m.id === entry.id && m.webllm === webllm.version));
    const kept: CachedModel = {
      id: entry.id,
      label: entry.label,
      modelUrl: entry.modelUrl,
      libUrl: entry.libUrl,
      webllm: webllm.version,
      custom: entry.custom,
      addedAt: new Date().toISOString(),
    };
    if (entry.contextLimit !== undefined) kept.contextLimit = entry.contextLimit;
    this.write([...others, kept]);
  }

  forget(model: CachedModel): void {
    this.write(this.all().filter((m) => !(m.id === model.id && m.webllm === model.webllm)));
  }
}

export function entryOf(m: CachedModel): ModelEntry {
  return {
    id: m.id,
    label: m.label,
    modelUrl: m.modelUrl,
    libUrl: m.libUrl,
    custom: m.custom,
    ...(m.contextLimit !== undefined && { contextLimit: m.contextLimit }),
  };
}

/** A model converted elsewhere and fetched before, named by --model: by its label, with or without the custom: its id carries. */
function keptCustom(flags: Pick<GpuFlags, 'model'>, cached: readonly CachedModel[]): CachedModel | undefined {
  const id = flags.model ?? DEFAULT_MODEL_ID;
  return cached.find((m) => m.custom && (m.id === id || m.id === `custom:${id}`));
}

/**
 * The WebLLM version the flags ask for: --webllm; else the one the model
 * library's folder names; else, for a converted model fetched before, the one
 * it was fetched for; else the app's.
 */
export function versionOf(flags: Pick<GpuFlags, 'webllm' | 'model-lib' | 'model'>, cached: readonly CachedModel[] = []): WebLLMVersion {
  if (flags.webllm !== undefined) {
    const v = webllmVersion(flags.webllm);
    if (!v) throw new UsageError(`--webllm ${flags.webllm} is not a WebLLM version memagent runs: ${WEBLLM_VERSIONS.map((w) => w.version).join(' or ')}.`);
    return v;
  }
  if (flags['model-lib']) return versionForLibrary(flags['model-lib']) ?? SHIPPED_WEBLLM;
  const kept = keptCustom(flags, cached);
  return (kept && webllmVersion(kept.webllm)) || SHIPPED_WEBLLM;
}

/**
 * The engine config the flags name: a prebuilt model by id, one fetched before
 * (models.json) by id, or a model converted elsewhere from --model-url and
 * --model-lib (as the app's custom models). Checked before anything is fetched.
 */
export function gpuConfigOf(flags: GpuFlags, cached: readonly CachedModel[] = []): EngineConfig {
  const speculate = flags.speculate;
  if (speculate !== undefined && speculate !== 'on' && speculate !== 'off') throw new UsageError(`--speculate must be on or off, got "${speculate}".`);
  const config = modelConfigOf(flags, cached);
  return speculate === 'off' ? { ...config, speculate: false } : config;
}

function modelConfigOf(flags: GpuFlags, cached: readonly CachedModel[]): EngineConfig {
  const url = flags['model-url'];
  const lib = flags['model-lib'];
  if (url === undefined && lib === undefined) {
    const known = keptCustom(flags, cached);
    return known ? engineConfigFor(entryOf(known)) : { model: flags.model ?? DEFAULT_MODEL_ID };
  }
  if (url === undefined || lib === undefined)
    throw new UsageError('A model converted elsewhere needs both --model-url (its files) and --model-lib (its WebLLM library, .wasm).');
  const contextLimit = flags.context === undefined ? QWEN_CONTEXT_LIMIT : Number(flags.context);
  const label = flags.model ?? decodeURIComponent(/\/([^/]+)\/resolve\//.exec(cleanModelUrl(url))?.[1] ?? 'custom model');
  const problem = customModelProblem({ label, modelUrl: url, libUrl: lib, contextLimit });
  if (problem) throw new UsageError(problem.replace('The context limit', '--context (the context limit)'));
  return { model: `custom:${label}`, label, modelUrl: cleanModelUrl(url), libUrl: lib, contextLimit };
}

/** One line per change worth a line: files finished, tenths of the load, the end. */
function progressLines(say: (line: string) => void): () => void {
  let last = '';
  let tenth = -1;
  return onModelProgress((p) => {
    let line: string | undefined;
    if (p.state !== 'working') line = p.text;
    else if (p.phase === 'download' && /^Downloaded|^Downloading the model library/.test(p.text)) line = p.text;
    else if (p.phase === 'load' && Math.floor(p.fraction * 10) > tenth) {
      tenth = Math.floor(p.fraction * 10);
      line = p.text;
    }
    if (line && line !== last) say(`  ${(last = line)}`);
  });
}

const described = new WeakMap<object, string>();

/** How a read names this engine: the model, the GPU, the runtime and where the files are. */
export function describeGpuEngine(engine: object): string | undefined {
  return described.get(engine);
}

/**
 * The WebLLM engine the flags ask for, on this machine's GPU, its files
 * downloaded (or found in the cache folder). Where there is no GPU adapter it
 * says so before anything is fetched.
 */
export async function openGpuEngine(flags: GpuFlags, say: (line: string) => void, overrides: Partial<NodeWebLLMOptions> = {}): Promise<WebLLMEngine> {
  const cacheDir = cacheDirOf(flags);
  const list = new ModelList(cacheDir);
  const config = gpuConfigOf(flags, list.all());
  const version = versionOf(flags, list.all());
  const runtime = new NodeWebLLM({ cacheDir, version, ...overrides });
  const gpu = await runtime.capability();
  if (gpu.status !== 'ok') throw new Error(gpu.message ?? 'No GPU adapter.');
  if (gpu.message) say(gpu.message);
  const stop = progressLines(say);
  try {
    const engine = await runtime.engine(config, () => runtime.prebuilt());
    list.remember(engine.model, version);
    await runtime.session.download(engine.model);
    described.set(
      engine,
      `model ${engine.model.label} on ${gpu.adapter}${gpu.fallback ? ' (software)' : ''} (WebLLM ${version.version} through Dawn; files in ${cacheDir})`,
    );
    return engine;
  } finally {
    stop();
  }
}

/** Loads the model with the window the read needs, saying how it goes. */
export async function loadGpuEngine(engine: Pick<Engine, 'prepare'>, contextTokens: number, say: (line: string) => void): Promise<void> {
  if (!engine.prepare) return;
  const stop = progressLines(say);
  try {
    await engine.prepare(contextTokens);
  } finally {
    stop();
  }
}
