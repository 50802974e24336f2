import { type ChunkLease, ChunkLists } from '../core/chunk-lists';
import { isAbortError, type TextGenerator } from '../core/generation';
import { answerFromMemory, APP_LOOP_METHOD, type LoopMethod, memoryLoop } from '../core/loop';
import { planRead, type ReadSettings, readSettings, readSettingsProblem } from '../core/plan';
import type { PlannedChunk } from '../core/read-reason';
import { DEFAULT_SKIM, SkimIndex, SkimPlanner } from '../core/skim';
import { SkimFollower } from '../core/skim-follow';
import { diffMemory } from '../core/memory-diff';
import {
  APP_PROMPT_SET,
  customPromptSet,
  PROMPT_SET_LABELS,
  PromptFileError,
  type PromptRecord,
  type PromptSet,
  promptRecord,
} from '../core/prompt-sets';
import { DEFAULT_TEMPLATES, finalPrompt, type PromptTemplates, templateProblem } from '../core/prompts';
import type { Tokenizer } from '../core/tokenizer';
import { Turns } from '../core/turns';
import { type Engine, type EngineConfig, withoutSecrets } from '../engines/engine';
import { hashBytes, type IngestOptions, type IngestProgress, ingestBytes, sizeRefusal } from '../ingest/ingest';
import type { DocumentRecord, FollowUpRecord, RunProgress, RunRecord, RunSettings, Store, StoreTextOptions } from '../storage/db';
import { DocumentGoneError, StaleRunError, StorageError, StorageFullError } from '../storage/db';
import { ImportError, parseExport } from '../storage/export';
import type { PromptChoice, PromptLibrary } from './prompt-files';
import { mark } from './marks';
import { COUNT_AT_IMPORT_CHARS, countTokens, estimateTokens, TokenCounts } from './token-counts';
import type { RunEvent } from '../agent/events';

/** A read to start: the book, the question, the engine, and the read settings (the defaults where absent). */
export interface RunRequest extends Partial<ReadSettings> {
  documentId: string;
  question: string;
  engineId: string;
  engineConfig?: EngineConfig;
  /** The edited templates, read when `prompts` is 'custom' (or when no set is named). */
  templates?: PromptTemplates;
  /**
   * The prompt set: 'auto' (nothing chosen: MemAgent (paper) for a model once
   * its file is here), a set by name, or 'custom' for `templates`. Absent: the
   * templates given, or this app's wording.
   */
  prompts?: PromptChoice;
  /**
   * Read only the chunks most relevant to the question (off when absent);
   * follow names the memory finds, and with lookBack also to earlier chunks.
   */
  skim?: { keep: number; followMemory: boolean; lookBack?: boolean };
}

export interface RunnerDeps {
  store: Store;
  createEngine(engineId: string, config?: EngineConfig): Promise<Engine>;
  tokenizerFor(engineId: string, config?: EngineConfig): Promise<Tokenizer>;
  /**
   * The SHA-256 of a copy of `bytes`, made on another thread so that the bytes
   * can be read meanwhile; undefined where that is not done (no such thread,
   * or a file too large to hold twice).
   */
  hashBeside?(bytes: Uint8Array<ArrayBuffer>): Promise<string> | undefined;
  publish(event: RunEvent): void;
  /** Runs `work` holding the run's lock, waiting for it if another tab holds it. */
  withLock?(name: string, work: () => Promise<void>): Promise<void>;
  /** Runs `work` holding the lock if nobody holds it; false (and `work` not run) if someone does. */
  tryLock?(name: string, work: () => Promise<void>): Promise<boolean>;
  newId?(): string;
  /** Texts longer than this (characters) are stored with an estimated count and counted afterwards; COUNT_AT_IMPORT_CHARS by default. */
  countAtImportChars?: number;
  /** Bytes this site uses and may use (navigator.storage.estimate), to refuse a book that cannot fit. */
  estimateStorage?(): Promise<{ usage?: number; quota?: number }>;
  /** How texts are cut into parts and written (the Store's defaults otherwise). */
  textStorage?: Pick<StoreTextOptions, 'partChars' | 'batchChars'>;
  /** The MemAgent prompt files; without it only this app's wording and edited templates can be used. */
  prompts?: PromptLibrary;
}

export interface IngestRequest {
  /** Cut Project Gutenberg's header and footer (default true). */
  stripGutenberg?: boolean;
  onProgress?(progress: IngestProgress): void;
  /**
   * The document can be read: it is stored with the first part of its text,
   * while the rest is still being written. The import's own promise settles
   * once the whole text is stored (or nothing of it is left).
   */
  onUsable?(doc: DocumentRecord): void;
}

/** A refusal the person can act on (the message says what to do). */
export class RunRequestError extends Error {
  override name = 'RunRequestError';
}

/**
 * Owns runs: plans them, drives the memory loop, and commits each revision
 * together with the run's progress before anyone is told about it.
 */
export class Runner {
  private readonly active = new Map<string, { controller: AbortController; done: Promise<void> }>();
  private readonly engines = new Map<string, Promise<Engine>>();
  /** The text most recently imported or read: one book, held while it is likely to be read. */
  private lastText: { id: string; text: string } | null = null;
  /** Imports whose text is being written, by document id: they end with the whole text stored. */
  private readonly imports = new Map<string, Promise<DocumentRecord>>();
  /** Exact token counts of long books, made after they are stored. */
  readonly counts: TokenCounts;
  /** GPU device losses in a row per run, reset by each committed revision. */
  private readonly recoveries = new Map<string, number>();
  /** The engine (by key) each run reading here uses: a follow-up question does not cut in on it. */
  private readonly reading = new Map<string, { engineKey: string; question: string }>();
  /** Follow-up answers being written, by engine key: one request at a time per engine. */
  private readonly answering = new Map<string, Promise<unknown>>();
  /** The chunk lists of the books being read: runs over the same book share one, cut once. */
  private readonly chunkLists = new ChunkLists();
  /** Turns at each engine that serves one request at a time, by engine key: its runs read a step each in rotation. */
  private readonly turns = new Map<string, Turns>();

  constructor(private readonly deps: RunnerDeps) {
    this.counts = new TokenCounts(deps);
  }

  /**
   * A file → a stored document: read (any format), counted in the engine's
   * tokens and stored with its structure, or refused with a message. The same
   * bytes added again return the stored document without reading them again.
   */
  ingest(name: string, bytes: Uint8Array<ArrayBuffer>, engineId: string, request: IngestRequest = {}): Promise<DocumentRecord> {
    return this.ingestOwned(name, { bytes }, engineId, request);
  }

  /**
   * Reads the bytes the holder owns and lets go of them once they are text, so
   * that a large book is held as bytes and text together only while it is
   * decoded, not while it is counted and stored.
   */
  private async ingestOwned(
    name: string,
    holder: { bytes: Uint8Array<ArrayBuffer> | null },
    engineId: string,
    request: IngestRequest,
  ): Promise<DocumentRecord> {
    const { store } = this.deps;
    const report = throttle(request.onProgress);
    // Where the bytes can be hashed elsewhere, they are read meanwhile, and a file stored before is
    // known once both are done; otherwise the hash comes first and such a file is not read at all.
    mark('import-bytes');
    const beside = this.deps.hashBeside?.(holder.bytes!);
    const hash = beside ?? (await hashBytes(holder.bytes!));
    if (!beside) {
      const existing = await this.settledDocument(hash as string, request);
      if (existing) return existing;
    }
    // How much room the browser grants is asked while the file is read.
    const room = this.deps.estimateStorage?.().catch(() => undefined);
    const options: IngestOptions = {
      hash,
      stripGutenberg: request.stripGutenberg ?? true,
      // The bytes are this import's own: reading may rewrite them (see IngestOptions.consumeBytes).
      consumeBytes: true,
      onProgress: (p) => report({ stage: p.stage, fraction: 0.5 * p.fraction }),
    };
    const reading = ingestBytes(name, holder.bytes!, options);
    holder.bytes = null;
    if (beside) {
      const sum = await beside.catch((e: unknown) => {
        reading.catch(() => undefined);
        throw e;
      });
      mark('import-hashed');
      const existing = await this.settledDocument(sum, request);
      if (existing) {
        reading.catch(() => undefined);
        return existing;
      }
    }
    const [doc, tokenizer] = await Promise.all([reading, this.deps.tokenizerFor(engineId)]);
    mark('import-read');
    await this.checkRoom(name, 2 * (doc.text.length + (doc.stripped ? doc.stripped.header.length + doc.stripped.footer.length : 0)), await room);
    // A long book is stored with an estimate and counted afterwards: reading can start at once.
    const exact = doc.text.length <= (this.deps.countAtImportChars ?? COUNT_AT_IMPORT_CHARS);
    const tokens = exact
      ? countTokens(doc.text, tokenizer, (f) => report({ stage: 'Counting tokens', fraction: 0.5 + 0.4 * f }))
      : estimateTokens(doc.text, tokenizer);
    const storedFrom = exact ? 0.9 : 0.5;
    mark('import-counted');
    report({ stage: 'Storing', fraction: storedFrom });
    const record: Omit<DocumentRecord, 'partChars' | 'importing'> = {
      id: doc.hash,
      name: doc.name,
      bytes: doc.bytes,
      encoding: doc.encoding,
      chars: doc.text.length,
      tokens,
      ...(exact ? {} : { tokensEstimated: true as const }),
      addedAt: Date.now(),
      format: doc.format,
      anchors: doc.anchors,
    };
    if (doc.pages !== undefined) record.pages = doc.pages;
    if (doc.title) record.title = doc.title;
    if (doc.stripped) record.stripped = { header: doc.stripped.header.length, footer: doc.stripped.footer.length };
    let usable: DocumentRecord | null = null;
    // One tab stores a book at a time: the same file added in two tabs at once is stored once.
    const storing = this.holding(`memagent-import-${doc.hash}`, () =>
      store.storeDocument(record, doc.text, doc.stripped, {
        ...this.deps.textStorage,
        onUsable: (d) => {
          mark('import-usable');
          usable = d;
          this.lastText = { id: d.id, text: doc.text };
          request.onUsable?.(d);
        },
        onProgress: (f) => report({ stage: 'Storing', fraction: storedFrom + (1 - storedFrom) * f }),
      }),
    );
    this.imports.set(doc.hash, storing);
    let stored: DocumentRecord;
    try {
      stored = await storing;
    } catch (e) {
      throw await this.importFailed(name, doc.hash, usable !== null, e);
    } finally {
      this.imports.delete(doc.hash);
    }
    report({ stage: 'Done', fraction: 1 });
    if (!usable) request.onUsable?.(stored); // stored before by another tab: usable as it is
    // Every tab: a book that was usable with part of its text stored is whole now.
    else if ((usable as DocumentRecord).importing) this.deps.publish({ type: 'document', documentId: stored.id });
    // A count that fails (the tab closing) leaves the estimate; the next start of the worker counts again.
    if (stored.tokensEstimated && usable) void this.counts.count(stored.id, doc.text, tokenizer).catch(() => undefined);
    return stored;
  }

  /** Runs `work` holding lock `name` where there are locks (one tab imports a book at a time). */
  private async holding<T>(name: string, work: () => Promise<T>): Promise<T> {
    if (!this.deps.withLock) return work();
    let out: { value: T } | undefined;
    await this.deps.withLock(name, async () => {
      out = { value: await work() };
    });
    return out!.value;
  }

  /**
   * A document already stored under this hash, once its import is over: a
   * finished one at once, one still being imported (here or in another tab)
   * when that import ends. An import that was cut short is removed, and
   * undefined returned: the file is imported afresh.
   */
  private async settledDocument(hash: string, request: IngestRequest): Promise<DocumentRecord | undefined> {
    const { store } = this.deps;
    let existing = await store.getDocument(hash);
    if (existing?.importing) {
      const here = this.imports.get(hash);
      if (here) {
        request.onUsable?.(existing);
        return here;
      }
      // Another tab may be importing it: wait for that import to end, then look again.
      await this.holding(`memagent-import-${hash}`, async () => undefined);
      existing = await store.getDocument(hash);
      if (existing?.importing) {
        await this.deleteDocument(hash);
        existing = undefined;
      }
    }
    if (!existing) return undefined;
    if (existing.tokensEstimated) void this.counts.pending().catch(() => undefined);
    request.onUsable?.(existing);
    return existing;
  }

  /**
   * An import that failed while storing: what it wrote is removed (with any
   * run started on it meanwhile), and the error says so in words.
   */
  private async importFailed(name: string, id: string, wasUsable: boolean, e: unknown): Promise<unknown> {
    let kept = '';
    if (wasUsable) {
      const removed = await this.deleteDocument(id).catch(() => null);
      this.deps.publish({ type: 'document', documentId: id });
      const runs = removed?.runs ?? 0;
      kept = removed
        ? ` Nothing of it was kept${runs ? `, and the read${runs > 1 ? 's' : ''} started on it ${runs > 1 ? 'were' : 'was'} removed` : ''}.`
        : // The database is out of reach (closed by the browser): the next start of the app removes it.
          ' What was stored of it is removed the next time the app opens.';
    }
    if (e instanceof DocumentGoneError) return new RunRequestError(`"${name}" was deleted before it was completely stored.`);
    if (e instanceof StorageFullError) {
      return new StorageFullError(
        `"${name}" does not fit in this browser's storage. Delete documents you no longer need from the Library, ` +
          `or free space for this site, then add it again.${kept}`,
      );
    }
    if (e instanceof StorageError) return new StorageError(`${e.message}${kept}`, e.kind);
    return e;
  }

  /**
   * Removes what imports cut short left behind (a tab closed or crashed while
   * a book was being stored): such a book is deleted with any run started on
   * it, so that no book is ever left with part of its text. An import still
   * going on in another tab holds its lock and is left alone.
   */
  async recoverImports(): Promise<number> {
    let removed = 0;
    for (const doc of await this.deps.store.listDocuments()) {
      if (!doc.importing || this.imports.has(doc.id)) continue;
      const free = this.deps.tryLock
        ? await this.deps.tryLock(`memagent-import-${doc.id}`, async () => {
            await this.deleteDocument(doc.id);
          })
        : (await this.deleteDocument(doc.id), true);
      if (!free) continue;
      removed++;
      this.deps.publish({ type: 'document', documentId: doc.id });
    }
    return removed;
  }

  /**
   * A document's text: the one just imported or read is kept here, so that a
   * read started right after an import does not wait to load a long book again.
   */
  private async text(documentId: string): Promise<string | undefined> {
    if (this.lastText?.id === documentId) return this.lastText.text;
    const text = await this.deps.store.readText(documentId);
    if (text !== undefined) this.lastText = { id: documentId, text };
    return text;
  }

  /**
   * The whole text of a stored book, to read it. A book still being imported
   * elsewhere is not whole yet: if that import was cut short, the book is
   * removed (and undefined returned); if it is still going on, the person is
   * asked to wait for it.
   */
  private async bookText(doc: DocumentRecord): Promise<string | undefined> {
    const text = await this.text(doc.id);
    if (text !== undefined || !doc.importing) return text;
    if (await this.recoverImports()) return undefined;
    throw new RunRequestError(`"${doc.name}" is still being stored by another tab. Wait until its import has finished, then try again.`);
  }

  /** A picked file: a file too large is refused before its bytes are read into memory. */
  async ingestFile(file: Blob & { name: string }, engineId: string, request: IngestRequest = {}): Promise<DocumentRecord> {
    const refusal = sizeRefusal(file.name, file.size);
    if (refusal) throw refusal;
    mark('import-file', true);
    request.onProgress?.({ stage: 'Reading the file', fraction: 0 });
    return this.ingestOwned(file.name, { bytes: new Uint8Array(await file.arrayBuffer()) }, engineId, request);
  }

  /** Refuses, before writing anything, a text that the browser's storage has no room for. */
  private async checkRoom(name: string, bytes: number, estimate: { usage?: number; quota?: number } | undefined): Promise<void> {
    if (!estimate?.quota) return;
    const free = estimate.quota - (estimate.usage ?? 0);
    if (bytes > free) {
      const mb = (n: number) => `${Math.max(0, n / 1024 / 1024).toFixed(1)} MB`;
      throw new StorageFullError(
        `"${name}" needs about ${mb(bytes)} of storage, but this browser allows this site only ${mb(free)} more. ` +
          'Delete documents you no longer need from the Library, or free space for this site, then add it again.',
      );
    }
  }

  /** Deletes a document with its runs, revisions and memories; runs still reading are stopped first. */
  async deleteDocument(id: string): Promise<{ runs: number }> {
    if (this.lastText?.id === id) this.lastText = null;
    this.chunkLists.forget(id);
    for (const run of await this.deps.store.listRuns()) {
      if (run.documentId === id) this.active.get(run.id)?.controller.abort();
    }
    return this.deps.store.deleteDocument(id);
  }

  /** Validates a run export, then stores it whole; returns the run's id. */
  async importRun(json: string): Promise<string> {
    const { run, revisions, memories, followUps } = parseExport(json);
    if (await this.deps.store.getRun(run.id)) throw new ImportError('This run is already in this browser; open it from the list of runs.');
    await this.deps.store.importRun(run, revisions, memories, followUps);
    this.deps.publish({ type: 'status', runId: run.id, status: run.status });
    return run.id;
  }

  /** Plans and stores a run, then starts reading; returns its id once stored. */
  async start(request: RunRequest): Promise<string> {
    return (await this.startMany(request, [request.question]))[0]!;
  }

  /**
   * Several questions about one book: one run per question, planned together
   * so that they share one chunk size and so one chunk list, cut once. On an
   * engine that serves one request at a time the runs take turns, a step each;
   * on a server they are read at once. Returns the runs' ids, in the
   * questions' order, once all are stored.
   */
  async startMany(request: Omit<RunRequest, 'question'>, questionList: readonly string[]): Promise<string[]> {
    mark('run-requested', true);
    const questions = questionList.map((q) => q.trim());
    if (questions.length === 0 || !questions[0]) throw new RunRequestError('Enter a question before reading: the memory keeps what helps answer it.');
    const empty = questions.findIndex((q) => !q);
    if (empty >= 0) throw new RunRequestError(`Question ${empty + 1} is empty: type a question there or remove it.`);
    const asked = readSettings(request);
    const wrong = readSettingsProblem(asked);
    if (wrong) throw new RunRequestError(wrong.message);
    const { store } = this.deps;
    const doc = await store.getDocument(request.documentId);
    const text = doc && (await this.bookText(doc));
    if (!doc || text === undefined) throw new RunRequestError('That document is no longer stored. Add the file again.');
    const engine = await this.engine(request.engineId, request.engineConfig);
    const prompts = await this.prompts(request);
    const templates = { ...prompts.set.templates };
    const problem = templateProblem(templates);
    if (problem) throw new RunRequestError(problem);
    const count = (s: string) => engine.tokenizer.count(s);
    let settings: RunSettings;
    try {
      // The longest question sets the room left for chunks: every run then cuts the book the same way.
      settings = planRead(asked, { contextWindow: engine.contextWindow, count, updateTemplate: templates.update, questionTokens: Math.max(...questions.map(count)) });
    } catch (e) {
      throw new RunRequestError((e as Error).message);
    }
    const skim = request.skim ? { ...DEFAULT_SKIM, keep: request.skim.keep } : null;
    // The book is cut while it is read: the first step starts as soon as the first chunk is cut.
    // A skim ranks every chunk first, so it cuts the whole book before it starts.
    const pipelined = !skim;
    const allChunks = pipelined ? [] : this.chunkLists.whole({ documentId: doc.id, tokenizer: engine.tokenizer, chunkTokens: settings.chunkTokens }, text);
    const index = skim ? new SkimIndex(text, allChunks) : null;
    const runs: RunRecord[] = [];
    const now = Date.now();
    for (const question of questions) {
      const chunks: PlannedChunk[] =
        skim && index ? new SkimPlanner(index, question, skim).plan().map(({ index: i, reason }) => ({ ...allChunks[i]!, reason })) : [...allChunks];
      runs.push({
        id: this.deps.newId?.() ?? crypto.randomUUID(),
        documentId: doc.id,
        documentName: doc.name,
        question,
        engineId: request.engineId,
        engineConfig: withoutSecrets(request.engineConfig),
        settings,
        templates,
        prompts: prompts.record,
        chunks,
        ...(pipelined ? { chunking: { estimate: Math.max(1, Math.ceil(doc.tokens / settings.chunkTokens)) } } : {}),
        ...(skim && request.skim
          ? {
              skim: {
                ...skim,
                followMemory: request.skim.followMemory,
                ...(request.skim.followMemory && request.skim.lookBack ? { lookBack: true } : {}),
                totalChunks: allChunks.length,
              },
            }
          : {}),
        status: 'running',
        nextChunk: 0,
        memory: prompts.set.initialMemory,
        // Apart by a millisecond each, so that the list of runs (newest first) keeps the questions' order.
        createdAt: now + (questions.length - 1 - runs.length),
        updatedAt: now,
      });
    }
    const created: string[] = [];
    try {
      for (const run of runs) {
        await store.createRun(run);
        created.push(run.id);
      }
    } catch (e) {
      // All the questions' runs or none: a read that could not store its last run leaves no other behind.
      for (const id of created) await store.deleteRun(id).catch(() => undefined);
      throw e;
    }
    mark('run-stored');
    for (const run of runs) {
      this.deps.publish({ type: 'status', runId: run.id, status: 'running' });
      void this.execute(run.id);
    }
    return runs.map((r) => r.id);
  }

  /** The prompt set a new run uses, and what the run records about it. */
  private async prompts(request: Pick<RunRequest, 'prompts' | 'templates' | 'engineId'>): Promise<{ set: PromptSet; record: PromptRecord }> {
    const choice: PromptChoice =
      request.prompts ?? (!request.templates || (request.templates.update === DEFAULT_TEMPLATES.update && request.templates.final === DEFAULT_TEMPLATES.final) ? 'app' : 'custom');
    if (choice === 'custom' || choice === 'app' || !this.deps.prompts) {
      if (choice !== 'custom' && choice !== 'app' && choice !== 'auto') {
        throw new RunRequestError(`${PROMPT_SET_LABELS[choice]} cannot be used here: its prompt file cannot be fetched.`);
      }
      const set = choice === 'custom' ? customPromptSet(request.templates ?? DEFAULT_TEMPLATES) : { ...APP_PROMPT_SET };
      return { set, record: promptRecord(set) };
    }
    try {
      return await this.deps.prompts.resolve(choice, request.engineId, request.templates);
    } catch (e) {
      if (e instanceof PromptFileError) throw new RunRequestError(e.message);
      throw e;
    }
  }

  /** Continues a paused, cancelled, failed or interrupted run from its next chunk. */
  async resume(runId: string): Promise<void> {
    const run = await this.deps.store.getRun(runId);
    if (!run) throw new RunRequestError('That run is no longer stored.');
    if (run.status === 'done') return;
    if (run.status !== 'running') await this.deps.store.setRunStatus(runId, 'running');
    // Told even when storage already said running (a pause whose write did not fit): every tab shows it reading again.
    this.deps.publish({ type: 'status', runId, status: 'running' });
    void this.execute(runId);
  }

  /** Deletes a run with its revisions and memories (its document stays); a reader of it, here or in another tab, stops first. */
  async deleteRun(runId: string): Promise<void> {
    this.active.get(runId)?.controller.abort();
    this.deps.publish({ type: 'control', runId, action: 'cancel' });
    await this.deps.store.deleteRun(runId);
    // Other tabs re-read their lists on a status event; the run is no longer in storage.
    this.deps.publish({ type: 'status', runId, status: 'cancelled' });
  }

  async pause(runId: string): Promise<void> {
    await this.stop(runId, 'paused');
  }

  async cancel(runId: string): Promise<void> {
    await this.stop(runId, 'cancelled');
  }

  /**
   * What another tab did. A pause or cancel stops the reader here. A run that
   * starts reading there gets a standby here, waiting for the run's lock: if
   * that tab closes or crashes, this one carries on from the next chunk.
   */
  handleControl(event: RunEvent): void {
    if (event.type === 'control') this.active.get(event.runId)?.controller.abort();
    else if (event.type === 'status' && event.status === 'running' && this.deps.withLock) void this.execute(event.runId);
  }

  private async stop(runId: string, status: 'paused' | 'cancelled'): Promise<void> {
    const run = await this.deps.store.getRun(runId);
    if (!run || run.status === 'done') return;
    await this.deps.store.setRunStatus(runId, status);
    this.active.get(runId)?.controller.abort();
    this.deps.publish({ type: 'control', runId, action: status === 'paused' ? 'pause' : 'cancel' });
    this.deps.publish({ type: 'status', runId, status });
  }

  /**
   * Answers a new question from a finished run's final memory: the run's own
   * answer step (its final template, engine, memory size and sampling), with
   * no reading. The answer is stored with the run before anyone hears of it;
   * a failure stores nothing and says why in words.
   */
  async askFollowUp(runId: string, question: string, onToken?: (text: string) => void): Promise<FollowUpRecord> {
    const asked = question.trim();
    if (!asked) throw new RunRequestError('Type a question first: it is answered from the memory this read kept.');
    const { store, publish } = this.deps;
    const run = await store.getRun(runId);
    if (!run) throw new RunRequestError('That run is no longer stored.');
    if (run.status !== 'done') {
      throw new RunRequestError('This read has not finished: a follow-up question is answered from its final memory, which exists once the read is done.');
    }
    const key = engineKey(run.engineId, run.engineConfig);
    const busy = [...this.reading.values()].find((r) => r.engineKey === key);
    if (busy) {
      throw new RunRequestError(
        `The engine is busy reading for "${busy.question}". Ask again when that read has finished, or pause it first.`,
      );
    }
    // One answer at a time per engine: a second question waits for the first.
    const before = this.answering.get(key) ?? Promise.resolve();
    const work = before.catch(() => undefined).then(() => this.answerFollowUp(run, asked, onToken));
    this.answering.set(key, work);
    void work.catch(() => undefined).finally(() => {
      if (this.answering.get(key) === work) this.answering.delete(key);
    });
    const record = await work;
    publish({ type: 'followUp', runId, index: record.index });
    return record;
  }

  private async answerFollowUp(run: RunRecord, question: string, onToken?: (text: string) => void): Promise<FollowUpRecord> {
    let engine: Engine;
    try {
      engine = await this.engine(run.engineId, run.engineConfig);
      await engine.prepare?.(run.settings.contextTokens);
    } catch (e) {
      throw new RunRequestError(`The engine of this read could not be started, so nothing was answered: ${(e as Error).message}`);
    }
    // The run planned its window for its own question; a longer one must still leave room for the reply.
    const promptTokens = engine.tokenizer.count(finalPrompt(run.templates, question, run.memory));
    const room = Math.min(run.settings.contextTokens, engine.contextWindow);
    if (promptTokens + run.settings.memoryTokens > room) {
      const over = promptTokens + run.settings.memoryTokens - room;
      throw new RunRequestError(
        `This question is too long for the memory and the ${room}-token context this read used: shorten it by about ${over} tokens.`,
      );
    }
    const writing = onToken ? new WritingStream(onToken) : undefined;
    let step;
    try {
      step = await answerFromMemory({
        question,
        memory: run.memory,
        generator: engine,
        templates: run.templates,
        memoryTokens: run.settings.memoryTokens,
        sampling: { temperature: run.settings.temperature, topP: run.settings.topP, seed: run.settings.seed },
        onToken: writing && ((delta) => writing.add(delta)),
        method: loopMethod(run),
      });
    } catch (e) {
      throw new RunRequestError(`The answer could not be written, and nothing was stored: ${(e as Error).message}`);
    } finally {
      writing?.reset();
    }
    try {
      return await this.deps.store.addFollowUp({
        runId: run.id,
        question,
        answer: step.answer,
        reply: step.reply,
        memoryIndex: run.nextChunk - 1,
        promptTokens: step.result.usage.promptTokens,
        completionTokens: step.result.usage.completionTokens,
        finishReason: step.result.finishReason,
        ms: step.ms,
        askedAt: Date.now(),
      });
    } catch (e) {
      if (e instanceof StaleRunError) throw new RunRequestError(e.message);
      throw e;
    }
  }

  /** One engine per id and configuration, reused across runs (a loaded model stays loaded). */
  private engine(engineId: string, config?: EngineConfig): Promise<Engine> {
    const key = engineKey(engineId, config);
    let e = this.engines.get(key);
    if (!e) {
      e = this.deps.createEngine(engineId, config);
      e.catch(() => this.engines.delete(key));
      this.engines.set(key, e);
    }
    return e;
  }

  private turnsAt(key: string): Turns {
    let t = this.turns.get(key);
    if (!t) this.turns.set(key, (t = new Turns()));
    return t;
  }

  /**
   * Reads a run to its end, holding its lock so that one tab writes it. A run
   * that is stopping finishes its current step before the next reader starts.
   */
  private execute(runId: string): Promise<void> {
    const current = this.active.get(runId);
    if (current && !current.controller.signal.aborted) return current.done;
    const controller = new AbortController();
    const work = async () => {
      while (await this.read(runId, controller.signal)); // true: the engine recovered from a device loss, so read on
    };
    const done = (current?.done ?? Promise.resolve())
      .then(() => (this.deps.withLock ? this.deps.withLock(`memagent-run-${runId}`, work) : work()))
      .finally(() => {
        if (this.active.get(runId)?.controller === controller) this.active.delete(runId);
      });
    this.active.set(runId, { controller, done });
    return done;
  }

  private async read(runId: string, signal: AbortSignal): Promise<boolean | void> {
    const { store, publish } = this.deps;
    // State is read after the lock is held: another writer may have moved the run on.
    const loaded = await store.getRun(runId);
    if (!loaded || loaded.status !== 'running' || signal.aborted) return;
    let run: RunProgress = loaded;
    let writing: WritingStream | undefined;
    let lease: ChunkLease | undefined;
    let recoverable: Engine | undefined;
    /** Gives back this run's turn at the engine, once its step is stored. */
    let giveTurn: (() => void) | undefined;
    try {
      // The book most recently imported or read is at hand; another is read from storage.
      let text = await this.text(run.documentId);
      if (text === undefined) {
        const doc = await store.getDocument(run.documentId);
        text = doc && (await this.bookText(doc));
      }
      if (text === undefined) {
        // A book whose import was cut short is removed with its runs, this one included.
        if (!(await store.getRun(runId))) return;
        throw new Error('The document of this run is no longer stored. Add the file again and start a new run.');
      }
      mark('run-reading');
      const engine = await this.engine(run.engineId, run.engineConfig);
      this.reading.set(runId, { engineKey: engineKey(run.engineId, run.engineConfig), question: run.question });
      recoverable = engine;
      await engine.prepare?.(run.settings.contextTokens, signal);
      writing = new WritingStream((text) => publish({ type: 'writing', runId, index: run!.nextChunk, text }));
      // The loop reads this list; a skim that follows the memory grows it ahead of the reader.
      const plan = [...loaded.chunks];
      const listKey = { documentId: run.documentId, tokenizer: engine.tokenizer, chunkTokens: run.settings.chunkTokens };
      if (run.chunking) {
        // One list per book and chunk size, shared with the other runs reading it. Chunks cut so far
        // are stored on this run as the list reports them; a resume cuts the rest again.
        lease = this.chunkLists.open(listKey, text, plan, (spans, done) => {
          const chunks = [...spans];
          void store
            .updateRun(runId, () => (done ? { chunks, chunking: undefined } : { chunks }))
            .then(() => publish({ type: 'chunks', runId, known: chunks.length, done }))
            .catch(() => undefined); // the next batch, or a resume, stores them again
        });
      }
      const follower = run.skim?.followMemory
        ? new SkimFollower(new SkimIndex(text, this.chunkLists.whole(listKey, text)), run.question, run.memory, plan, run.skim)
        : null;
      // A model on this device serves one request at a time: its runs take turns, a whole step each
      // (request and commit), so that every question's memory moves on together. A server reads them at once.
      const turns = engine.parallel ? null : this.turnsAt(engineKey(run.engineId, run.engineConfig));
      const generator: TextGenerator = turns
        ? {
            generate: async (messages, options) => {
              giveTurn ??= await turns.take(signal);
              return engine.generate(messages, options);
            },
          }
        : engine;
      const loop = memoryLoop({
        text,
        chunks: lease ?? plan,
        question: run.question,
        generator,
        templates: run.templates,
        memoryTokens: run.settings.memoryTokens,
        sampling: { temperature: run.settings.temperature, topP: run.settings.topP, seed: run.settings.seed },
        resume: { nextChunk: run.nextChunk, memory: run.memory },
        // The answer is read as the prompt set's final template asks for it (runs from before prompt sets: leniently).
        method: loopMethod(run),
        signal,
        onToken: (delta) => writing?.add(delta),
      });
      for await (const event of loop) {
        writing?.reset();
        if (event.kind === 'revision') {
          const span = (lease ? lease.span(event.index) : plan[event.index])!;
          const change = diffMemory(run.memory, event.memory);
          const grew = follower?.follow(event.memory, event.index) ?? false;
          run = await store.commitRevision(
            {
              runId,
              index: event.index,
              memoryTokens: engine.tokenizer.count(event.memory),
              wordsAdded: change.wordsAdded,
              wordsRemoved: change.wordsRemoved,
              start: span.start,
              end: span.end,
              chunkTokens: span.tokens,
              promptTokens: event.result.usage.promptTokens,
              completionTokens: event.result.usage.completionTokens,
              ms: event.ms,
              finishReason: event.result.finishReason,
              retries: (event.result.retries ?? 0) + (this.recoveries.get(runId) ?? 0),
              prefillTokensPerSecond: event.result.usage.prefillTokensPerSecond,
              decodeTokensPerSecond: event.result.usage.decodeTokensPerSecond,
              timeToFirstTokenSeconds: event.result.usage.timeToFirstTokenSeconds,
              committedAt: Date.now(),
            },
            event.memory,
            grew ? [...plan] : undefined,
          );
          this.recoveries.delete(runId);
          publish({ type: 'revision', runId, index: event.index });
        } else {
          await store.updateRun(runId, () => ({
            status: 'done',
            answer: event.answer,
            reply: event.reply,
            error: undefined,
            finishedAt: Date.now(),
          }));
          publish({ type: 'status', runId, status: 'done' });
        }
        giveTurn?.();
        giveTurn = undefined;
      }
    } catch (e) {
      if (isAbortError(e) || signal.aborted) return; // pause or cancel already recorded the status
      if (e instanceof StaleRunError) return; // another writer owns this run
      if (e instanceof Error && e.name === 'DeviceLostError') {
        // Up to 3 losses in a row: reload the engine and read on from the last stored revision.
        const attempt = (this.recoveries.get(runId) ?? 0) + 1;
        if (recoverable?.recover && attempt <= 3) {
          this.recoveries.set(runId, attempt);
          await recoverable.recover(attempt).catch(() => undefined);
          return true;
        }
        this.recoveries.delete(runId);
        const message = `${e.message} The GPU was lost ${attempt} times in a row, so the run is paused; press Resume to try again.`;
        await store.setRunStatus(runId, 'paused', message);
        publish({ type: 'status', runId, status: 'paused', error: message });
        return;
      }
      if (e instanceof StorageFullError) {
        // The failed step rolled back whole; the run waits for room instead of failing.
        const message = `${e.message} Then press Resume: everything read so far is kept.`;
        // This write may not fit either; the event still tells every tab, and a reload resumes and asks again.
        await store.setRunStatus(runId, 'paused', message).catch(() => undefined);
        publish({ type: 'status', runId, status: 'paused', error: message });
        return;
      }
      if (e instanceof StorageError && (e.kind === 'closed' || e.kind === 'newer-version')) {
        // Nothing more can be stored from this tab; storage still says running, so the reload resumes.
        const message = `${e.message} The run then continues from its last saved revision.`;
        publish({ type: 'status', runId, status: 'paused', error: message });
        return;
      }
      const message = e instanceof Error ? e.message : String(e);
      await store.setRunStatus(runId, 'failed', message).catch(() => undefined);
      publish({ type: 'status', runId, status: 'failed', error: message });
    } finally {
      writing?.reset(); // a stopped step's partial text is never announced
      this.reading.delete(runId);
      giveTurn?.();
      lease?.release();
    }
  }
}

/** Which engine instance a run uses: one per id and configuration. */
function engineKey(engineId: string, config?: EngineConfig): string {
  return `${engineId} ${JSON.stringify(config ?? {})}`;
}

/**
 * The memory being written, passed on at most ten times a second: enough to
 * watch a step progress, few enough messages for any number of tabs.
 */
class WritingStream {
  private text = '';
  private timer: ReturnType<typeof setTimeout> | undefined;
  private lastSent = 0;

  constructor(private readonly send: (text: string) => void) {}

  add(delta: string): void {
    this.text += delta;
    // The first text of a step goes out at once; after that at most every 100 ms.
    this.timer ??= setTimeout(
      () => {
        this.timer = undefined;
        this.lastSent = performance.now();
        this.send(this.text);
      },
      Math.max(0, this.lastSent + 100 - performance.now()),
    );
  }

  reset(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.text = '';
  }
}

/** Passes progress on when the stage changes or it moved by a percent: a 100 MB import sends ~100 messages, not millions. */
function throttle(listener: IngestRequest['onProgress']): (p: IngestProgress) => void {
  let last: IngestProgress | null = null;
  return (p) => {
    if (!listener) return;
    if (last && last.stage === p.stage && p.fraction - last.fraction < 0.01 && p.fraction < 1) return;
    last = p;
    void Promise.resolve(listener(p)).catch(() => undefined);
  };
}

/** How a run's loop reads and answers: this app's reading, with the answer read as its prompt set asks. */
function loopMethod(run: Pick<RunRecord, 'prompts'>): LoopMethod {
  return { ...APP_LOOP_METHOD, answerStyle: run.prompts?.answerStyle ?? APP_LOOP_METHOD.answerStyle };
}
