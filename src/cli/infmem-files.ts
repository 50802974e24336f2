/**
 * InfMem's two pinned files for a command-line read: a local copy
 * (--prompts-file, --fncall-file), else the cached copy, else fetched from
 * the raw files at the pinned commit or a mirror (--prompts-base,
 * --fncall-base) and kept in the cache for offline use. Every copy is
 * checked against its pinned SHA-256 before anything of it is used.
 */
import { fetchBytes } from '../core/fetch-bytes';
import { existsSync, readFileSync } from 'node:fs';
import { fnCallSystem } from '../core/infmem/fncall-system';
import {
  defaultInfmemBase,
  INFMEM_FILES,
  InfmemFileError,
  type InfmemFileId,
  type InfmemFileSpec,
  infmemFileUrl,
  type InfmemTemplates,
  readFnCallFile,
  readInfmemFile,
} from '../core/infmem/official-files';
import { promptsBaseProblem } from '../core/prompt-sets';
import { UsageError } from './flags';
import { cachePath, defaultCacheDir, keep } from './prompts';

export interface InfmemFileFlags {
  'prompts-file'?: string;
  'prompts-base'?: string;
  'fncall-file'?: string;
  'fncall-base'?: string;
}

export interface InfmemFileEnvironment {
  /** The pinned files; tests pass their stand-ins' hashes here. */
  specs?: Readonly<Record<InfmemFileId, InfmemFileSpec>>;
  cacheDir?: string;
  fetch?: typeof fetch;
}

export interface InfmemPrompts {
  templates: InfmemTemplates;
  /** The planner's system message, built from Qwen-Agent's words and the tool schema. */
  toolSystem: string;
  /** Where each file came from, for the read's first line. */
  sources: Record<InfmemFileId, string>;
}

const FLAGS: Readonly<Record<InfmemFileId, { file: keyof InfmemFileFlags; base: keyof InfmemFileFlags }>> = {
  infmem: { file: 'prompts-file', base: 'prompts-base' },
  fncall: { file: 'fncall-file', base: 'fncall-base' },
};

/** How to get a pinned file where it cannot be fetched. */
function howToGet(id: InfmemFileId, spec: InfmemFileSpec): string {
  return `Download ${infmemFileUrl(spec)} where you can and give it with --${FLAGS[id].file} PATH, or give --${FLAGS[id].base} URL of a mirror that serves <URL>/${spec.path}.`;
}

/** One pinned file's bytes, checked by `read`: local copy, cache, or fetched. */
async function pinnedBytes<T>(id: InfmemFileId, flags: InfmemFileFlags, env: Required<InfmemFileEnvironment>, read: (bytes: Uint8Array) => Promise<T>) {
  const spec = env.specs[id];
  const local = flags[FLAGS[id].file];
  if (local !== undefined) {
    if (!existsSync(local)) throw new UsageError(`There is no file ${local} (--${FLAGS[id].file}).`);
    const bytes = readFileSync(local);
    const value = await read(bytes);
    keep(env.cacheDir, spec, bytes);
    return { value, source: `file ${local}` };
  }
  const cached = cachePath(env.cacheDir, spec);
  if (existsSync(cached)) {
    try {
      return { value: await read(readFileSync(cached)), source: `cache ${cached}` };
    } catch {
      // A damaged copy: fetched again below.
    }
  }
  const base = flags[FLAGS[id].base] ?? defaultInfmemBase(spec);
  const url = infmemFileUrl(spec, base);
  const bytes = await fetchBytes(
    url,
    { fetch: env.fetch, init: { signal: AbortSignal.timeout(20_000) } },
    (m) => new InfmemFileError(`${m} ${howToGet(id, spec)}`, 'network'),
  );
  const value = await read(bytes);
  keep(env.cacheDir, spec, bytes);
  return { value, source: url };
}

/** InfMem's templates and the planner's system message, from the two pinned files. */
export async function resolveInfmemPrompts(flags: InfmemFileFlags, environment: InfmemFileEnvironment = {}): Promise<InfmemPrompts> {
  for (const id of ['infmem', 'fncall'] as const) {
    const base = flags[FLAGS[id].base];
    const problem = base === undefined ? null : promptsBaseProblem(base);
    if (problem) throw new UsageError(`--${FLAGS[id].base}: ${problem.replace(/ Enter the folder.*$/, ` Enter the folder that holds ${topFolder(id)}.`)}`);
  }
  const env: Required<InfmemFileEnvironment> = {
    specs: environment.specs ?? INFMEM_FILES,
    cacheDir: environment.cacheDir ?? defaultCacheDir(),
    fetch: environment.fetch ?? ((input: string | URL | Request, init?: RequestInit) => fetch(input, init)),
  };
  const infmem = await pinnedBytes('infmem', flags, env, (b) => readInfmemFile(b, env.specs.infmem));
  const fncall = await pinnedBytes('fncall', flags, env, (b) => readFnCallFile(b, env.specs.fncall));
  return {
    templates: infmem.value,
    toolSystem: fnCallSystem(fncall.value, [infmem.value.tool]),
    sources: { infmem: infmem.source, fncall: fncall.source },
  };
}

/** The first folder of a pinned file's path, for a message about a mirror. */
function topFolder(id: InfmemFileId): string {
  return `${INFMEM_FILES[id].path.split('/')[0]}/…`;
}
