/**
 * InfMem's two pinned files in the browser (its evaluation file and
 * Qwen-Agent's function-call words): fetched from the pinned commits or a
 * mirror, imported from a local copy, kept in IndexedDB beside MemAgent's
 * prompt files, and checked against the pinned SHA-256 on every use. None of
 * their text ships with the app.
 */
import { fetchBytes } from '../core/fetch-bytes';
import { fnCallSystem } from '../core/infmem/fncall-system';
import {
  defaultInfmemBase,
  INFMEM_FILES,
  InfmemFileError,
  type InfmemFileId,
  type InfmemFileSpec,
  infmemFileUrl,
  readFnCallFile,
  readInfmemFile,
} from '../core/infmem/official-files';
import { promptsBaseProblem, sha256Hex } from '../core/prompt-sets';
import type { Store } from '../storage/db';
import type { InfmemFileStatus } from '../agent/protocol';

export type { InfmemFileStatus };

export interface InfmemPromptsInUse {
  templates: Awaited<ReturnType<typeof readInfmemFile>>;
  /** The planner's system message, built from Qwen-Agent's words and the tool schema. */
  toolSystem: string;
  /** Where each kept copy came from (a URL, or the name of an imported file). */
  sources: Record<InfmemFileId, string>;
}

export interface InfmemFileOptions {
  /** The pinned files; tests pass their stand-ins' hashes here. */
  specs?: Readonly<Record<InfmemFileId, InfmemFileSpec>>;
  fetch?: typeof fetch;
  timeoutMs?: number;
}

const IDS = ['infmem', 'fncall'] as const;

export class InfmemFileLibrary {
  private readonly specs: Readonly<Record<InfmemFileId, InfmemFileSpec>>;
  private readonly fetchImpl: typeof fetch;
  private readonly timeoutMs: number;
  private readonly bases: Partial<Record<InfmemFileId, string>> = {};
  private readonly errors = new Map<InfmemFileId, string>();

  constructor(
    private readonly store: Promise<Store> | Store,
    options: InfmemFileOptions = {},
  ) {
    this.specs = options.specs ?? INFMEM_FILES;
    this.fetchImpl = options.fetch ?? ((input, init) => fetch(input, init));
    this.timeoutMs = options.timeoutMs ?? 15_000;
  }

  /** A mirror serving `<base>/<path>` for one file; empty for the raw file at its pinned commit. */
  setBase(id: InfmemFileId, base: string): void {
    const problem = promptsBaseProblem(base);
    if (problem) throw new InfmemFileError(problem.replace(/ Enter the folder.*$/, ` Enter the folder that holds ${this.specs[id].path}.`), 'network');
    if (base.trim()) this.bases[id] = base.trim();
    else delete this.bases[id];
  }

  private url(id: InfmemFileId): string {
    const spec = this.specs[id];
    return infmemFileUrl(spec, this.bases[id] ?? defaultInfmemBase(spec));
  }

  /** Reads bytes as the pinned file `id`; throws when the hash or the content is not the pinned one. */
  private async check(id: InfmemFileId, bytes: Uint8Array): Promise<void> {
    if (id === 'infmem') await readInfmemFile(bytes, this.specs.infmem);
    else await readFnCallFile(bytes, this.specs.fncall);
  }

  /** The kept copy of a file, checked; undefined when there is none that passes. */
  private async kept(id: InfmemFileId): Promise<{ bytes: Uint8Array; source: string; savedAt: number } | undefined> {
    const record = await (await this.store).getPromptFile(this.specs[id].path);
    if (!record) return undefined;
    const bytes = new Uint8Array(record.bytes);
    try {
      await this.check(id, bytes);
      return { bytes, source: record.source, savedAt: record.savedAt };
    } catch {
      return undefined; // another version kept earlier: fetched again
    }
  }

  private async keep(id: InfmemFileId, bytes: Uint8Array, source: string): Promise<void> {
    const spec = this.specs[id];
    await (await this.store).putPromptFile({ path: spec.path, sha256: spec.sha256, bytes: new Uint8Array(bytes).buffer, source, savedAt: Date.now() });
    this.errors.delete(id);
  }

  /** Fetches a file from its pinned commit (or mirror), checks it and keeps it. */
  async fetch(id: InfmemFileId): Promise<void> {
    const url = this.url(id);
    try {
      const init: RequestInit = { cache: 'no-store', signal: AbortSignal.timeout(this.timeoutMs) };
      const bytes = await fetchBytes(url, { fetch: this.fetchImpl, init }, (m) => new InfmemFileError(m, 'network'));
      await this.check(id, bytes);
      await this.keep(id, bytes, url);
    } catch (e) {
      this.errors.set(id, e instanceof Error ? e.message : String(e));
      throw e;
    }
  }

  /** A local copy of either pinned file, known by its hash; refused whole (nothing kept) when it is neither. */
  async import(name: string, bytes: Uint8Array): Promise<InfmemFileId> {
    const hash = await sha256Hex(bytes);
    const id = IDS.find((i) => this.specs[i].sha256 === hash);
    if (!id) {
      const pinned = IDS.map((i) => `${this.specs[i].path.split('/').pop()} (${this.specs[i].sha256})`).join(' or ');
      throw new InfmemFileError(`"${name}" was refused: its SHA-256 is ${hash}, which is not that of ${pinned}. Nothing of it was used or kept.`, 'hash');
    }
    await this.check(id, bytes);
    await this.keep(id, bytes, `imported ${name}`);
    return id;
  }

  /** Fetches each file not kept yet; a failure is kept for the status to say, not thrown. */
  async fetchMissing(): Promise<InfmemFileStatus[]> {
    // `fetch` keeps the failure for `status` to say.
    for (const id of IDS) if (!(await this.kept(id))) await this.fetch(id).catch(() => undefined);
    return this.status();
  }

  async status(): Promise<InfmemFileStatus[]> {
    return Promise.all(
      IDS.map(async (id) => {
        const spec = this.specs[id];
        const kept = await this.kept(id);
        const status: InfmemFileStatus = { id, path: spec.path, sha256: spec.sha256, url: this.url(id), have: !!kept };
        if (kept) Object.assign(status, { source: kept.source, savedAt: kept.savedAt });
        const error = this.errors.get(id);
        if (!kept && error) status.error = error;
        return status;
      }),
    );
  }

  /** The templates and planner system message a read uses: kept copies, else fetched now; a file that cannot be had says how to get it. */
  async prompts(): Promise<InfmemPromptsInUse> {
    const bytes = {} as Record<InfmemFileId, Uint8Array>;
    const sources = {} as Record<InfmemFileId, string>;
    for (const id of IDS) {
      let kept = await this.kept(id);
      if (!kept) {
        await this.fetch(id).catch((e: unknown) => {
          const spec = this.specs[id];
          throw new InfmemFileError(
            `${e instanceof Error ? e.message : String(e)} InfMem reads with its official prompts, which the app does not ship: go online, set a mirror, or download ${infmemFileUrl(spec)} and import it (${spec.path.split('/').pop()}).`,
            e instanceof InfmemFileError ? e.reason : 'network',
          );
        });
        kept = (await this.kept(id))!;
      }
      bytes[id] = kept.bytes;
      sources[id] = kept.source;
    }
    const templates = await readInfmemFile(bytes.infmem, this.specs.infmem);
    const words = await readFnCallFile(bytes.fncall, this.specs.fncall);
    return { templates, toolSystem: fnCallSystem(words, [templates.tool]), sources };
  }
}
