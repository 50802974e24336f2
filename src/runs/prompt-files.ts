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
  promptFileUrl,
  promptRecord,
  promptSetFromFile,
  promptsBaseProblem,
  sha256Hex,
} from '../core/prompt-sets';
import type { PromptTemplates } from '../core/prompts';
import { needsModel } from '../engines/infos';
import type { Store } from '../storage/db';
import { RequestError } from '../jobs/request-error';
import type { PromptChoice, PromptFileStatus } from '../agent/protocol';

export interface PromptLibraryOptions {
  /** The pinned files; tests pass their stand-ins' hashes here. */
  specs?: readonly PromptFileSpec[];
  fetch?: typeof fetch;
  /** How long a fetch may take before the file counts as unavailable. */
  timeoutMs?: number;
}

/** A run with no set chosen does not wait on a fetch that failed this recently; an explicit fetch always tries. */
const RETRY_AFTER_MS = 60_000;

/**
 * The MemAgent prompt files in the browser: fetched from the pinned commit (or
 * a mirror) whenever the app is fetching anyway, imported from a local copy,
 * kept in IndexedDB, and checked against the pinned hash on every use.
 */
export class PromptLibrary {
  private base = DEFAULT_PROMPTS_BASE;
  private readonly specs: readonly PromptFileSpec[];
  private readonly fetchImpl: typeof fetch;
  private readonly timeoutMs: number;
  private readonly fetching = new Map<FileSetId, Promise<PromptSet>>();
  private readonly errors = new Map<FileSetId, string>();
  /** When each file last failed to arrive: a run does not wait on a fetch that just failed. */
  private readonly failedAt = new Map<FileSetId, number>();

  constructor(
    private readonly store: Promise<Store> | Store,
    options: PromptLibraryOptions = {},
  ) {
    this.specs = options.specs ?? PROMPT_FILES;
    this.fetchImpl = options.fetch ?? ((input, init) => fetch(input, init));
    this.timeoutMs = options.timeoutMs ?? 15_000;
  }

  /** The mirror to fetch from (the setting in the app); empty for the pinned commit's raw files. */
  setBase(base: string): void {
    const problem = promptsBaseProblem(base);
    if (problem) throw new PromptFileError(problem, 'unknown');
    this.base = base.trim() || DEFAULT_PROMPTS_BASE;
  }

  /** The kept copy of a set, checked against the pinned hash; undefined when there is none that passes. */
  async cached(set: FileSetId): Promise<{ set: PromptSet; source: string } | undefined> {
    const spec = fileSpec(set, this.specs);
    const record = await (await this.store).getPromptFile(spec.path);
    if (!record) return undefined;
    try {
      return { set: await promptSetFromFile(spec, new Uint8Array(record.bytes)), source: record.source };
    } catch {
      return undefined; // another version kept earlier: fetched again below
    }
  }

  /** Fetches a set's file from the pinned commit (or the mirror), checks it and keeps it; one fetch per file at a time. */
  fetch(set: FileSetId): Promise<PromptSet> {
    let running = this.fetching.get(set);
    if (!running) {
      running = this.download(set).then(
        (s) => (this.errors.delete(set), this.failedAt.delete(set), s),
        (e: unknown) => {
          this.errors.set(set, e instanceof Error ? e.message : String(e));
          this.failedAt.set(set, Date.now());
          throw e;
        },
      );
      // Callers see the failure through `running` (and the form through `errors`); this branch only forgets it.
      running.catch(() => undefined).finally(() => this.fetching.delete(set));
      this.fetching.set(set, running);
    }
    return running;
  }

  private async download(set: FileSetId): Promise<PromptSet> {
    const { set: parsed } = await fetchPinnedFile({
      spec: fileSpec(set, this.specs),
      base: this.base,
      fetch: this.fetchImpl,
      timeoutMs: this.timeoutMs,
      init: { cache: 'no-store' },
      keep: async (spec, bytes, url) =>
        (await this.store).putPromptFile({ path: spec.path, sha256: spec.sha256, bytes: new Uint8Array(bytes).buffer, source: url, savedAt: Date.now() }),
    });
    return parsed;
  }

  /**
   * Fetches whichever pinned files are not here yet; failures are remembered
   * for the form, never thrown. Called whenever the app is fetching anyway
   * (a model download, a server engine's first use, a run on a model).
   */
  async refresh(): Promise<void> {
    await Promise.all(
      this.specs.map(async (spec) => {
        // A copy that cannot be read is fetched again.
        if (await this.cached(spec.set).catch(() => undefined)) return;
        await this.fetch(spec.set).catch(() => undefined); // remembered in `errors` for the form
      }),
    );
  }

  /** A local copy of a pinned file, known by its hash; refused whole when it is neither. */
  async import(name: string, bytes: Uint8Array): Promise<PromptSet> {
    const spec = await identifyPromptFile(bytes, this.specs);
    if (!spec) {
      const pinned = this.specs.map((s) => `${s.path.split('/').pop()} (${s.sha256})`).join(' or ');
      throw new PromptFileError(
        `"${name}" was refused: its SHA-256 is ${await sha256Hex(bytes)}, which is not that of ${pinned} at MemAgent commit ${DEFAULT_PROMPTS_BASE.split('/').pop()!.slice(0, 7)}. ` +
          'Nothing of it was used or kept. Download the file from the address shown in Settings and import that.',
        'hash',
      );
    }
    const parsed = await promptSetFromFile(spec, bytes);
    await (
      await this.store
    ).putPromptFile({ path: spec.path, sha256: spec.sha256, bytes: new Uint8Array(bytes).buffer, source: `imported ${name}`, savedAt: Date.now() });
    this.errors.delete(spec.set);
    this.failedAt.delete(spec.set);
    return parsed;
  }

  async status(): Promise<PromptFileStatus[]> {
    const store = await this.store;
    return Promise.all(
      this.specs.map(async (spec) => {
        const kept = await this.cached(spec.set);
        const record = kept ? await store.getPromptFile(spec.path) : undefined;
        const status: PromptFileStatus = {
          set: spec.set,
          label: PROMPT_SET_LABELS[spec.set],
          path: spec.path,
          sha256: spec.sha256,
          url: promptFileUrl(spec, this.base),
          have: !!kept,
        };
        if (record) Object.assign(status, { source: record.source, savedAt: record.savedAt });
        const error = this.errors.get(spec.set);
        if (!kept && error) status.error = error;
        return status;
      }),
    );
  }

  /** The sets this browser holds, for showing their templates. */
  async sets(): Promise<Partial<Record<FileSetId, PromptSet>>> {
    const out: Partial<Record<FileSetId, PromptSet>> = {};
    for (const spec of this.specs) {
      const kept = await this.cached(spec.set);
      if (kept) out[spec.set] = kept.set;
    }
    return out;
  }

  private howToGet(set: FileSetId): string {
    const spec = fileSpec(set, this.specs);
    return (
      `Go online and press "Fetch prompt files" under "Sampling and prompts" on the Read form, set a mirror there, or download ${promptFileUrl(spec)} ` +
      `and add it with "Import prompt file".`
    );
  }

  /**
   * The set a run uses. A set the person chose is used or refused with how to
   * get it; with no choice, a model engine gets MemAgent (paper) once its file
   * is here (fetched now if it can be), and this app's wording until then,
   * with a note saying so.
   */
  async resolve(choice: PromptChoice, engineId: string, templates?: PromptTemplates): Promise<{ set: PromptSet; record: PromptRecord }> {
    if (choice === 'app' || (choice === 'auto' && !needsModel(engineId))) return { set: { ...APP_PROMPT_SET }, record: promptRecord(APP_PROMPT_SET) };
    if (!needsModel(engineId) && isFileSet(choice)) return readsNoInstructions(choice);
    if (choice === 'custom') {
      const set = customPromptSet(templates ?? APP_PROMPT_SET.templates);
      return { set, record: promptRecord(set) };
    }
    const wanted: FileSetId = isFileSet(choice) ? choice : 'memagent';
    const kept = await this.cached(wanted);
    if (kept) return { set: kept.set, record: promptRecord(kept.set, { source: kept.source }) };
    try {
      const recent = Date.now() - (this.failedAt.get(wanted) ?? -Infinity) < RETRY_AFTER_MS;
      if (choice === 'auto' && recent) throw new PromptFileError(this.errors.get(wanted) ?? 'the last fetch failed', 'network');
      const fetched = await this.fetch(wanted);
      return { set: fetched, record: promptRecord(fetched, { source: promptFileUrl(fileSpec(wanted, this.specs), this.base) }) };
    } catch (e) {
      const why = e instanceof Error ? e.message : String(e);
      if (choice !== 'auto') {
        throw new PromptFileError(
          `${PROMPT_SET_LABELS[wanted]} needs its prompt file, which this browser does not have yet: ${why} ${this.howToGet(wanted)}`,
          'network',
        );
      }
      const note = `MemAgent (paper) was not used: its prompt file is not in this browser yet. ${why} This run uses this app's wording. ${this.howToGet(wanted)}`;
      return { set: { ...APP_PROMPT_SET }, record: promptRecord(APP_PROMPT_SET, { note }) };
    }
  }
}

/**
 * A MemAgent set asked for a read by an engine that runs no model: it sends
 * no instructions anywhere, so no prompt file is needed; this app's wording
 * is recorded, with a note that the set asked for made no difference.
 */
function readsNoInstructions(choice: FileSetId): { set: PromptSet; record: PromptRecord } {
  const note = `${PROMPT_SET_LABELS[choice]} was not needed: this engine runs no model and reads no instructions, so no prompt file is used.`;
  return { set: { ...APP_PROMPT_SET }, record: promptRecord(APP_PROMPT_SET, { note }) };
}

/**
 * The prompt set a read or a sweep uses, and what it records about it. Without
 * the prompt files (the CLI, tests) only this app's wording and edited
 * templates can be used; a set that cannot be had is refused in words.
 */
export async function choosePromptSet(
  files: Pick<PromptLibrary, 'resolve'> | undefined,
  choice: PromptChoice,
  engineId: string,
  templates?: PromptTemplates,
): Promise<{ set: PromptSet; record: PromptRecord }> {
  if (!needsModel(engineId) && isFileSet(choice)) return readsNoInstructions(choice);
  if (!files) {
    if (choice !== 'custom' && choice !== 'app' && choice !== 'auto') {
      throw new RequestError(`${PROMPT_SET_LABELS[choice]} cannot be used here: its prompt file cannot be fetched.`);
    }
    const set = choice === 'custom' ? customPromptSet(templates ?? APP_PROMPT_SET.templates) : { ...APP_PROMPT_SET };
    return { set, record: promptRecord(set) };
  }
  try {
    return await files.resolve(choice, engineId, templates);
  } catch (e) {
    if (e instanceof PromptFileError) throw new RequestError(e.message);
    throw e;
  }
}
