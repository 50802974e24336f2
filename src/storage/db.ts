import { type DBSchema, type IDBPDatabase, openDB } from 'idb';
import type { DocumentRecord, FollowUpRecord, MemoryRecord, RevisionRecord, RunProgress, RunRecord, RunStatus, StrippedText, TextPartRecord } from './schema';
import type { DatasetItemRecord, DatasetSampleRecord, EvaluationRecord, EvaluationSampleRecord, EvaluationStatus } from './evaluation-schema';
import type { CalibrationRecord, CustomModelRecord } from './model-schema';
import type { PromptFileRecord } from './schema';
import { modelKey, type StepSample } from '../core/estimate';
import type { ReadReason } from '../core/read-reason';
import { cutParts, PART_CHARS, partCount, partsCovering, sliceParts } from '../core/text-parts';
import { connectionLost, type Failure, StorageError, translateStorageError } from './errors';

export * from './schema';
export * from './evaluation-schema';
export * from './model-schema';
export { StorageError, StorageFullError } from './errors';

export const DB_NAME = 'memagent';
// Version 5 stores texts in parts; 6 adds prompt files; 7 dataset items; 8 follow-up answers (each step stands alone).
export const DB_VERSION = 8;

interface MemagentDB extends DBSchema {
  documents: { key: string; value: DocumentRecord };
  /** Each document's whole text as one value, until version 5 moved texts into textParts. */
  texts: { key: string; value: { id: string; text: string; stripped?: StrippedText } };
  textParts: { key: [string, number]; value: TextPartRecord };
  runs: { key: string; value: RunProgress; indexes: { byDocument: string } };
  revisions: { key: [string, number]; value: RevisionRecord };
  memories: { key: [string, number]; value: MemoryRecord };
  evaluations: { key: string; value: EvaluationRecord };
  evaluationSamples: { key: [string, number]; value: EvaluationSampleRecord | DatasetSampleRecord };
  datasetItems: { key: [string, number]; value: DatasetItemRecord };
  customModels: { key: string; value: CustomModelRecord };
  calibrations: { key: [string, string]; value: CalibrationRecord };
  runChunks: { key: string; value: RunChunksRecord };
  promptFiles: { key: string; value: PromptFileRecord };
  followUps: { key: [string, number]; value: FollowUpRecord };
}

/**
 * A run is stored without its chunk list (as RunProgress), which lives in
 * runChunks, so that committing a revision reads and writes a few hundred
 * bytes, not a list of thousands of chunks. There the chunks are (start, end,
 * tokens) triples in one typed array: a third of the bytes of a list of
 * objects, copied whole rather than object by object, and small enough to stay
 * inside the database for thousands of chunks.
 */
interface RunChunksRecord {
  runId: string;
  spans: Uint32Array<ArrayBuffer>;
  /** Why each chunk is read, by position (a skim's runs only; absent on runs stored before reasons were kept). */
  reasons?: (ReadReason | null)[];
}

function packChunks(runId: string, chunks: RunRecord['chunks']): RunChunksRecord {
  const spans = new Uint32Array(chunks.length * 3);
  chunks.forEach((c, i) => spans.set([c.start, c.end, c.tokens], i * 3));
  const record: RunChunksRecord = { runId, spans };
  if (chunks.some((c) => c.reason)) record.reasons = chunks.map((c) => c.reason ?? null);
  return record;
}

function unpackChunks(record: RunChunksRecord | undefined): RunRecord['chunks'] {
  const spans = record?.spans ?? new Uint32Array(0);
  const chunks: RunRecord['chunks'] = [];
  for (let i = 0; i + 2 < spans.length; i += 3) {
    const reason = record?.reasons?.[i / 3];
    chunks.push({ start: spans[i]!, end: spans[i + 1]!, tokens: spans[i + 2]!, ...(reason ? { reason } : {}) });
  }
  return chunks;
}

function splitRun(run: RunRecord): [RunProgress, RunChunksRecord] {
  const { chunks, ...stored } = run;
  return [stored, packChunks(run.id, chunks)];
}

function joinRun(run: RunProgress, chunks: RunChunksRecord | undefined): RunRecord {
  return { ...run, chunks: unpackChunks(chunks) };
}

/** How a document's text is written: see Store.storeDocument. */
export interface StoreTextOptions {
  /** Characters per part; PART_CHARS by default. */
  partChars?: number;
  /** Characters written per transaction after the first part. */
  batchChars?: number;
  /** The document is stored with its first part: reading may start while the rest is written. */
  onUsable?(doc: DocumentRecord): void;
  /** Share of the text stored so far, 0 to 1. */
  onProgress?(fraction: number): void;
}

/** The document being imported was deleted meanwhile: its import stops, and nothing of it is left. */
export class DocumentGoneError extends Error {
  override name = 'DocumentGoneError';
}

export class StaleRunError extends Error {
  override name = 'StaleRunError';
}

/** The one module that knows the IndexedDB schema; every read and write goes through here. */
export class Store {
  /** Why the connection is gone, once the browser closed it or a newer version of the app asked for it. */
  private lost: 'browser' | 'newer-version' | null = null;
  private readonly lostListeners = new Set<(error: StorageError) => void>();

  private constructor(private readonly db: IDBPDatabase<MemagentDB>) {}

  static async open(name = DB_NAME): Promise<Store> {
    let store: Store | undefined;
    const db = await openDB<MemagentDB>(name, DB_VERSION, {
      async upgrade(db, oldVersion, _newVersion, transaction) {
        // Each step upgrades one version, so any older database reaches the current one.
        if (oldVersion < 1) {
          db.createObjectStore('documents', { keyPath: 'id' });
          db.createObjectStore('texts', { keyPath: 'id' });
          db.createObjectStore('runs', { keyPath: 'id' }).createIndex('byDocument', 'documentId');
          db.createObjectStore('revisions', { keyPath: ['runId', 'index'] });
          db.createObjectStore('memories', { keyPath: ['runId', 'index'] });
        }
        if (!db.objectStoreNames.contains('memories')) {
          // The earliest version-1 databases kept each memory inside its revision: move them out.
          const memories = db.createObjectStore('memories', { keyPath: ['runId', 'index'] });
          let cursor = await transaction.objectStore('revisions').openCursor();
          while (cursor) {
            const { memory, ...old } = cursor.value as Partial<RevisionRecord> & Pick<RevisionRecord, 'runId' | 'index'> & { memory?: string };
            await memories.add({ runId: old.runId, index: old.index, memory: memory ?? '' });
            // Fields that version did not record yet; 0 is what the timeline shows for them.
            await cursor.update({ ...old, wordsAdded: old.wordsAdded ?? 0, wordsRemoved: old.wordsRemoved ?? 0, retries: old.retries ?? 0 } as RevisionRecord);
            cursor = await cursor.continue();
          }
        }
        if (oldVersion < 2) {
          db.createObjectStore('evaluations', { keyPath: 'id' });
          db.createObjectStore('evaluationSamples', { keyPath: ['evaluationId', 'ordinal'] });
        }
        if (oldVersion < 3) {
          db.createObjectStore('customModels', { keyPath: 'id' });
        }
        if (oldVersion < 4) {
          db.createObjectStore('calibrations', { keyPath: ['modelId', 'adapter'] });
          // Chunk lists move out of the run records, which every revision rewrites.
          const runChunks = db.createObjectStore('runChunks', { keyPath: 'runId' });
          let cursor = await transaction.objectStore('runs').openCursor();
          while (cursor) {
            const [stored, chunks] = splitRun(cursor.value as unknown as RunRecord);
            await runChunks.put(chunks);
            await cursor.update(stored);
            cursor = await cursor.continue();
          }
        }
        if (oldVersion < 5) {
          // Texts move into parts of 2^18 characters: Chromium refuses a single value over about 127 MiB,
          // so a book kept as one string of two-byte characters could not exceed about 66 million characters.
          const partChars = 1 << 18;
          const textParts = db.createObjectStore('textParts', { keyPath: ['documentId', 'part'] });
          const documents = transaction.objectStore('documents');
          let cursor = await transaction.objectStore('texts').openCursor();
          while (cursor) {
            const { id, text, stripped } = cursor.value;
            for (let part = 0; part === 0 || part * partChars < text.length; part++) {
              const record: TextPartRecord = { documentId: id, part, text: text.slice(part * partChars, (part + 1) * partChars) };
              if (part === 0 && stripped) record.stripped = stripped;
              await textParts.put(record);
            }
            const doc = await documents.get(id);
            if (doc) await documents.put({ ...doc, partChars });
            cursor = await cursor.continue();
          }
          db.deleteObjectStore('texts');
        }
        if (oldVersion < 6 && !db.objectStoreNames.contains('promptFiles')) {
          // The MemAgent prompt files, kept for offline use (keyed by their path in the MemAgent repository).
          db.createObjectStore('promptFiles', { keyPath: 'path' });
        }
        // Version 7: dataset files' items, read by evaluations. Guarded by name, so the step holds whatever came between.
        if (!db.objectStoreNames.contains('datasetItems')) db.createObjectStore('datasetItems', { keyPath: ['evaluationId', 'ordinal'] });
        if (oldVersion < 8) {
          // Questions asked of a finished run's final memory, kept beside the run.
          if (!db.objectStoreNames.contains('followUps')) db.createObjectStore('followUps', { keyPath: ['runId', 'index'] });
        }
      },
      // A tab with a newer version of the app needs this connection closed to upgrade the database.
      blocking(_current, _wanted, event) {
        (event.target as IDBDatabase).close();
        store?.loseConnection('newer-version');
      },
      // The browser closed the connection: site data cleared, or the browser shutting down.
      terminated() {
        store?.loseConnection('browser');
      },
    }).catch((e: unknown) => {
      throw translateStorageError(e, { what: "this site's saved books and runs", reading: true });
    });
    store = new Store(db);
    return store;
  }

  close(): void {
    this.db.close();
  }

  /**
   * Hears, in words, when this connection is gone for good: closed by the
   * browser or given up for a newer version of the app in another tab. Returns
   * a function that stops listening.
   */
  onLost(listener: (error: StorageError) => void): () => void {
    this.lostListeners.add(listener);
    return () => this.lostListeners.delete(listener);
  }

  private loseConnection(why: 'browser' | 'newer-version'): void {
    this.lost = why;
    const error = connectionLost(why);
    for (const listener of this.lostListeners) listener(error);
  }

  private lostError(failure: Failure): StorageError {
    const cause = Object.assign(new Error(this.lost ?? ''), { name: this.lost === 'newer-version' ? 'VersionError' : 'InvalidStateError' });
    return translateStorageError(cause, { ...failure, closed: this.lost === 'browser' }) as StorageError;
  }

  /**
   * Runs `work`, translating a storage failure into words (see errors.ts).
   * `work` may set `failure.tx`, whose own error tells why a request was aborted.
   */
  private async guard<T>(what: string | Failure, work: (failure: Failure) => Promise<T>): Promise<T> {
    const failure: Failure = typeof what === 'string' ? { what } : { ...what };
    try {
      return await work(failure);
    } catch (e) {
      if (this.lost && !(e instanceof StorageError) && !(e instanceof StaleRunError) && !(e instanceof DocumentGoneError)) throw this.lostError(failure);
      throw translateStorageError(e, failure);
    }
  }

  private read<T>(what: string, work: () => Promise<T>): Promise<T> {
    return this.guard({ what, reading: true }, work);
  }

  /**
   * Stores a document and its text in parts, or returns the document already
   * stored with the same id. The document is committed with its first part in
   * one transaction, then `onUsable` hears of it (marked `importing` while
   * more parts follow), and the remaining parts are written in transactions of
   * about `batchChars` characters; the last of them clears the mark. A failure
   * is thrown translated (see errors.ts); parts already written stay, with the
   * mark, for the caller to remove (deleteDocument) or, after a crash, for the
   * next start of the app.
   */
  async storeDocument(
    doc: Omit<DocumentRecord, 'partChars' | 'importing'>,
    text: string,
    stripped?: StrippedText,
    options: StoreTextOptions = {},
  ): Promise<DocumentRecord> {
    const partChars = options.partChars ?? PART_CHARS;
    const total = Math.max(1, partCount(text.length, partChars));
    // Small batches: a reader of the text never waits long for the batch being written.
    const perBatch = Math.max(1, Math.floor((options.batchChars ?? 4 * PART_CHARS) / partChars));
    const parts = cutParts(text, partChars);
    const record: DocumentRecord = { ...doc, partChars, ...(total > 1 ? { importing: true as const } : {}) };
    const what = `"${doc.name}"`;
    const first = await this.guard(what, async (failure) => {
      const tx = this.db.transaction(['documents', 'textParts'], 'readwrite');
      failure.tx = tx;
      const existing = await tx.objectStore('documents').get(doc.id);
      if (existing) {
        await tx.done;
        return existing;
      }
      const part: TextPartRecord = { documentId: doc.id, part: 0, text: parts.next().value ?? '' };
      if (stripped) part.stripped = stripped;
      await Promise.all([tx.objectStore('documents').put(record), tx.objectStore('textParts').put(part), tx.done]);
      return null;
    });
    if (first) return first;
    options.onUsable?.(record);
    options.onProgress?.(1 / total);
    let complete: DocumentRecord = record;
    for (let from = 1; from < total; from += perBatch) {
      const upto = Math.min(total, from + perBatch);
      const batch: TextPartRecord[] = [];
      for (let part = from; part < upto; part++) batch.push({ documentId: doc.id, part, text: parts.next().value! });
      const last = upto === total;
      await this.guard(what, async (failure) => {
        // Only the last batch holds the document's record: readers of it never wait for the parts before.
        const tx = this.db.transaction(last ? ['documents', 'textParts'] : ['textParts'], 'readwrite');
        failure.tx = tx;
        const store = tx.objectStore('textParts');
        // A document deleted meanwhile (its parts go with it, part 0 first) gets no more parts: nothing of it may stay behind.
        const [first, now] = await Promise.all([store.getKey([doc.id, 0]), last ? tx.objectStore('documents').get(doc.id) : undefined]);
        if (first === undefined || (last && !now?.importing)) {
          tx.abort();
          await tx.done.catch(() => undefined);
          throw new DocumentGoneError(`"${doc.name}" was deleted while it was being stored.`);
        }
        if (!last) return await Promise.all([...batch.map((p) => store.put(p)), tx.done]);
        // The record as it is now (its exact token count may have landed meanwhile), without the mark.
        const { importing: _, ...done } = now!;
        complete = done;
        await Promise.all([...batch.map((p) => store.put(p)), tx.objectStore('documents').put(done), tx.done]);
      });
      options.onProgress?.(upto / total);
    }
    return complete;
  }

  /**
   * Characters [start, end) of a document's text (all of it by default), read
   * from the parts that hold them. Undefined when the document is not stored,
   * or while an import has not yet written the parts the range needs.
   */
  readText(id: string, start = 0, end = Infinity): Promise<string | undefined> {
    return this.read('the text of this book', async () => {
      const tx = this.db.transaction(['documents', 'textParts']);
      const doc = await tx.objectStore('documents').get(id);
      if (!doc) return undefined;
      const to = Math.min(end, doc.chars);
      const from = Math.min(Math.max(0, start), to);
      if (from === to) return '';
      const { first, last } = partsCovering(from, to, doc.partChars);
      const range = IDBKeyRange.bound([id, first], [id, last]);
      // While an import writes the text, the parts a range needs may not be there yet: counted before they are read.
      if (doc.importing && (await tx.objectStore('textParts').count(range)) !== last - first + 1) return undefined;
      const parts = await tx.objectStore('textParts').getAll(range);
      if (parts.length !== last - first + 1 || parts.some((p, i) => p.part !== first + i)) {
        if (doc.importing) return undefined;
        throw Object.assign(new Error(`parts ${first}-${last} of ${id} are incomplete`), { name: 'NotReadableError' });
      }
      return sliceParts(
        parts.map((p) => p.text),
        first,
        doc.partChars,
        from,
        to,
      );
    });
  }

  /** The whole text of a document (see readText). */
  getText(id: string): Promise<string | undefined> {
    return this.readText(id);
  }

  /** Deletes a document with its text and every run, revision and memory of it, in one transaction. */
  deleteDocument(id: string): Promise<{ runs: number }> {
    return this.guard('the deletion of the book', async (failure) => {
      const tx = this.db.transaction(['documents', 'textParts', 'runs', 'runChunks', 'revisions', 'memories', 'followUps'], 'readwrite');
      failure.tx = tx;
      const runIds = await tx.objectStore('runs').index('byDocument').getAllKeys(id);
      await Promise.all([
        tx.objectStore('documents').delete(id),
        tx.objectStore('textParts').delete(IDBKeyRange.bound([id, 0], [id, Infinity])),
        ...runIds.flatMap((runId) => {
          const range = IDBKeyRange.bound([runId, 0], [runId, Infinity]);
          return [
            tx.objectStore('runs').delete(runId),
            tx.objectStore('runChunks').delete(runId),
            tx.objectStore('revisions').delete(range),
            tx.objectStore('memories').delete(range),
            tx.objectStore('followUps').delete(range),
          ];
        }),
        tx.done,
      ]);
      return { runs: runIds.length };
    });
  }

  /** What was cut from a document's text on import (Project Gutenberg's header and footer), if anything. */
  getStripped(id: string): Promise<StrippedText | undefined> {
    return this.read('the text of this book', async () => (await this.db.get('textParts', [id, 0]))?.stripped);
  }

  getDocument(id: string): Promise<DocumentRecord | undefined> {
    return this.read('the book', () => this.db.get('documents', id));
  }

  /** Replaces a document's estimated token count with the exact one; a deleted document stays deleted. */
  setDocumentTokens(id: string, tokens: number): Promise<DocumentRecord | undefined> {
    return this.guard('the token count of the book', async (failure) => {
      const tx = this.db.transaction('documents', 'readwrite');
      failure.tx = tx;
      const doc = await tx.store.get(id);
      if (!doc) {
        await tx.done;
        return undefined;
      }
      const { tokensEstimated: _, ...rest } = doc;
      // The import may still be writing parts; it clears its own mark, so the mark is left as it is now.
      const next: DocumentRecord = { ...rest, tokens };
      await Promise.all([tx.store.put(next), tx.done]);
      return next;
    });
  }

  listDocuments(): Promise<DocumentRecord[]> {
    return this.read('the list of books', () => this.db.getAll('documents'));
  }

  createRun(run: RunRecord): Promise<void> {
    return this.guard('the new run', async (failure) => {
      const tx = this.db.transaction(['runs', 'runChunks'], 'readwrite');
      failure.tx = tx;
      const [stored, chunks] = splitRun(run);
      await Promise.all([tx.objectStore('runs').add(stored), tx.objectStore('runChunks').put(chunks), tx.done]);
    });
  }

  /** Deletes a run with its revisions and memories, in one transaction; its document stays. */
  deleteRun(runId: string): Promise<void> {
    return this.guard('the deletion of the run', async (failure) => {
      const tx = this.db.transaction(['runs', 'runChunks', 'revisions', 'memories', 'followUps'], 'readwrite');
      failure.tx = tx;
      const range = IDBKeyRange.bound([runId, 0], [runId, Infinity]);
      await Promise.all([
        tx.objectStore('runs').delete(runId),
        tx.objectStore('runChunks').delete(runId),
        tx.objectStore('revisions').delete(range),
        tx.objectStore('memories').delete(range),
        tx.objectStore('followUps').delete(range),
        tx.done,
      ]);
    });
  }

  getRun(id: string): Promise<RunRecord | undefined> {
    return this.read('the run', async () => {
      const tx = this.db.transaction(['runs', 'runChunks']);
      const [run, chunks] = await Promise.all([tx.objectStore('runs').get(id), tx.objectStore('runChunks').get(id), tx.done]);
      return run && joinRun(run, chunks);
    });
  }

  /** Runs, newest first. */
  listRuns(): Promise<RunRecord[]> {
    return this.read('the list of runs', async () => {
      const tx = this.db.transaction(['runs', 'runChunks']);
      const [runs, chunks] = await Promise.all([tx.objectStore('runs').getAll(), tx.objectStore('runChunks').getAll(), tx.done]);
      const byRun = new Map(chunks.map((c) => [c.runId, c]));
      return runs.map((r) => joinRun(r, byRun.get(r.id))).sort((a, b) => b.createdAt - a.createdAt);
    });
  }

  /**
   * Commits one revision and its memory and advances the run in a single
   * transaction. Refuses a revision that is not the run's next chunk, so that no
   * chunk is stored twice even if two writers race.
   */
  commitRevision(revision: RevisionRecord, memory: string, chunks?: RunRecord['chunks']): Promise<RunProgress> {
    return this.guard(`revision ${revision.index + 1}`, async (failure) => {
      // The chunk list is in the transaction only when it changes: a reader of it never holds up a commit.
      const tx = this.db.transaction(chunks ? ['runs', 'runChunks', 'revisions', 'memories'] : ['runs', 'revisions', 'memories'], 'readwrite');
      failure.tx = tx;
      const runs = tx.objectStore('runs');
      const run = await runs.get(revision.runId);
      if (!run || run.nextChunk !== revision.index) {
        tx.abort();
        await tx.done.catch(() => undefined);
        throw new StaleRunError(
          `Revision ${revision.index + 1} of run ${revision.runId} is not the next one (${run ? run.nextChunk + 1 : 'no run'}).`,
        );
      }
      const next: RunProgress = { ...run, nextChunk: revision.index + 1, memory, updatedAt: revision.committedAt };
      await Promise.all([
        tx.objectStore('revisions').add(revision),
        tx.objectStore('memories').add({ runId: revision.runId, index: revision.index, memory }),
        runs.put(next),
        // A skim that follows the memory adds chunks ahead of the reader, with the revision that found them.
        chunks && tx.objectStore('runChunks').put(packChunks(revision.runId, chunks)),
        tx.done,
      ]);
      return next;
    });
  }

  /** Stores an imported run with its revisions, memories and follow-up answers, all or nothing. */
  importRun(
    run: RunRecord,
    revisions: readonly RevisionRecord[],
    memories: readonly MemoryRecord[],
    followUps: readonly FollowUpRecord[] = [],
  ): Promise<void> {
    return this.guard('the imported run', async (failure) => {
      const tx = this.db.transaction(['runs', 'runChunks', 'revisions', 'memories', 'followUps'], 'readwrite');
      failure.tx = tx;
      const [stored, chunks] = splitRun(run);
      await Promise.all([
        tx.objectStore('runs').add(stored),
        tx.objectStore('runChunks').put(chunks),
        ...revisions.map((r) => tx.objectStore('revisions').add(r)),
        ...memories.map((m) => tx.objectStore('memories').add(m)),
        ...followUps.map((f) => tx.objectStore('followUps').add(f)),
        tx.done,
      ]);
    });
  }

  /** Applies `change` to a run inside one transaction and returns the run as it is now (its chunks only where `change` set them). */
  updateRun(id: string, change: (run: RunProgress) => Partial<RunRecord>): Promise<RunProgress> {
    return this.guard('the run', async (failure) => {
      const tx = this.db.transaction(['runs', 'runChunks'], 'readwrite');
      failure.tx = tx;
      const run = await tx.objectStore('runs').get(id);
      if (!run) {
        tx.abort();
        await tx.done.catch(() => undefined);
        throw new Error(`No run with id ${id}.`);
      }
      const { chunks, ...rest } = change(run);
      const next: RunProgress = { ...run, ...rest, updatedAt: Date.now() };
      await Promise.all([tx.objectStore('runs').put(next), chunks && tx.objectStore('runChunks').put(packChunks(id, chunks)), tx.done]);
      return next;
    });
  }

  setRunStatus(id: string, status: RunStatus, error?: string): Promise<RunProgress> {
    return this.updateRun(id, () => ({ status, error }));
  }

  /** Every revision of a run, in order. */
  listRevisions(runId: string): Promise<RevisionRecord[]> {
    return this.listRevisionsFrom(runId, 0);
  }

  /**
   * The most recent memory updates of an engine's runs (time, prompt and reply
   * size, reported speeds), for estimates; with `model` (see modelKey), only
   * runs of that model.
   */
  recentSteps(engineId: string, model?: string, limit = 50): Promise<StepSample[]> {
    return this.read('the timings of past runs', async () => {
      const out: StepSample[] = [];
      // Newest first, without their chunk lists: only the steps are needed here.
      const runs = (await this.db.getAll('runs')).sort((a, b) => b.createdAt - a.createdAt);
      for (const run of runs) {
        if (run.engineId !== engineId || run.nextChunk === 0) continue;
        if (model !== undefined && modelKey(run.engineConfig) !== model) continue;
        const from = Math.max(0, run.nextChunk - (limit - out.length));
        for (const r of await this.listRevisionsFrom(run.id, from)) {
          const step: StepSample = { ms: r.ms, promptTokens: r.promptTokens, completionTokens: r.completionTokens };
          if (r.prefillTokensPerSecond !== undefined) step.prefillTokensPerSecond = r.prefillTokensPerSecond;
          if (r.decodeTokensPerSecond !== undefined) step.decodeTokensPerSecond = r.decodeTokensPerSecond;
          out.push(step);
        }
        if (out.length >= limit) break;
      }
      return out;
    });
  }

  /** Revisions of a run from chunk `index` on: what a view that has the earlier ones lacks. */
  listRevisionsFrom(runId: string, index: number): Promise<RevisionRecord[]> {
    return this.read('the revisions of the run', () => this.db.getAll('revisions', IDBKeyRange.bound([runId, index], [runId, Infinity])));
  }

  getRevision(runId: string, index: number): Promise<RevisionRecord | undefined> {
    return this.read(`revision ${index + 1}`, () => this.db.get('revisions', [runId, index]));
  }

  /** The memory written at chunk `index`. */
  getMemory(runId: string, index: number): Promise<string | undefined> {
    return this.read(`the memory of revision ${index + 1}`, async () => (await this.db.get('memories', [runId, index]))?.memory);
  }

  /** Every memory of a run, in order (for export). */
  listMemories(runId: string): Promise<string[]> {
    return this.read('the memories of the run', async () =>
      (await this.db.getAll('memories', IDBKeyRange.bound([runId, 0], [runId, Infinity]))).map((m) => m.memory),
    );
  }

  /**
   * Indexes of the revisions whose memory contains `needle` (case-insensitive),
   * read with a cursor so that no more than one memory is held at a time.
   */
  searchMemories(runId: string, needle: string): Promise<number[]> {
    return this.read('the memories of the run', async () => {
      const want = needle.toLocaleLowerCase();
      const hits: number[] = [];
      let cursor = await this.db.transaction('memories').store.openCursor(IDBKeyRange.bound([runId, 0], [runId, Infinity]));
      while (cursor) {
        if (cursor.value.memory.toLocaleLowerCase().includes(want)) hits.push(cursor.value.index);
        cursor = await cursor.continue();
      }
      return hits;
    });
  }

  /**
   * Stores a follow-up answer as the run's next one, in one transaction with a
   * check that the run is still there and finished: an answer is never kept
   * for a run deleted (or read again) while it was being written.
   */
  addFollowUp(followUp: Omit<FollowUpRecord, 'index'>): Promise<FollowUpRecord> {
    return this.guard('the follow-up answer', async (failure) => {
      const tx = this.db.transaction(['runs', 'followUps'], 'readwrite');
      failure.tx = tx;
      const range = IDBKeyRange.bound([followUp.runId, 0], [followUp.runId, Infinity]);
      const [run, count] = await Promise.all([tx.objectStore('runs').get(followUp.runId), tx.objectStore('followUps').count(range)]);
      if (!run || run.status !== 'done') {
        tx.abort();
        await tx.done.catch(() => undefined);
        throw new StaleRunError(
          run ? 'The read is no longer finished, so its final memory may change: the answer was not kept.' : 'The run was deleted while the answer was written: nothing was kept.',
        );
      }
      const record: FollowUpRecord = { ...followUp, index: count };
      await Promise.all([tx.objectStore('followUps').add(record), tx.done]);
      return record;
    });
  }

  /** A run's follow-up answers, in the order they were asked. */
  listFollowUps(runId: string): Promise<FollowUpRecord[]> {
    return this.read('the follow-up answers', () => this.db.getAll('followUps', IDBKeyRange.bound([runId, 0], [runId, Infinity])));
  }

  /**
   * Chunks read and planned of every run that is reading, for a progress
   * figure: run records without their chunk lists, and the lists' lengths
   * only for the runs that read.
   */
  readingProgress(): Promise<{ runId: string; read: number; total: number }[]> {
    return this.read('the progress of the runs', async () => {
      const tx = this.db.transaction(['runs', 'runChunks']);
      const running = (await tx.objectStore('runs').getAll()).filter((r) => r.status === 'running');
      const lists = await Promise.all(running.map((r) => tx.objectStore('runChunks').get(r.id)));
      return running.map((r, i) => {
        const known = (lists[i]?.spans.length ?? 0) / 3;
        return { runId: r.id, read: r.nextChunk, total: r.chunking ? Math.max(r.chunking.estimate, known) : known };
      });
    });
  }

  createEvaluation(evaluation: EvaluationRecord): Promise<void> {
    return this.guard('the new evaluation', async () => {
      await this.db.add('evaluations', evaluation);
    });
  }

  getEvaluation(id: string): Promise<EvaluationRecord | undefined> {
    return this.read('the evaluation', () => this.db.get('evaluations', id));
  }

  /** Evaluations, newest first. */
  listEvaluations(): Promise<EvaluationRecord[]> {
    return this.read('the list of evaluations', async () => (await this.db.getAll('evaluations')).sort((a, b) => b.createdAt - a.createdAt));
  }

  /** Applies `change` to an evaluation inside one transaction and returns the result. */
  updateEvaluation(id: string, change: (evaluation: EvaluationRecord) => Partial<EvaluationRecord>): Promise<EvaluationRecord> {
    return this.guard('the evaluation', async (failure) => {
      const tx = this.db.transaction('evaluations', 'readwrite');
      failure.tx = tx;
      const evaluation = await tx.store.get(id);
      if (!evaluation) {
        tx.abort();
        await tx.done.catch(() => undefined);
        throw new Error(`No evaluation with id ${id}.`);
      }
      const next = { ...evaluation, ...change(evaluation), updatedAt: Date.now() };
      await Promise.all([tx.store.put(next), tx.done]);
      return next;
    });
  }

  setEvaluationStatus(id: string, status: EvaluationStatus, error?: string): Promise<EvaluationRecord> {
    return this.updateEvaluation(id, () => ({ status, error }));
  }

  /**
   * Stores one finished sample and counts it in its evaluation, in one
   * transaction. Refuses a sample already stored, so that two writers never
   * count one twice.
   */
  commitEvaluationSample(sample: EvaluationSampleRecord | DatasetSampleRecord): Promise<EvaluationRecord> {
    return this.guard(`sample ${sample.ordinal + 1} of the evaluation`, async (failure) => {
      const tx = this.db.transaction(['evaluations', 'evaluationSamples'], 'readwrite');
      failure.tx = tx;
      const evaluations = tx.objectStore('evaluations');
      const samples = tx.objectStore('evaluationSamples');
      const [evaluation, existing] = await Promise.all([
        evaluations.get(sample.evaluationId),
        samples.getKey([sample.evaluationId, sample.ordinal]),
      ]);
      if (!evaluation || existing !== undefined) {
        tx.abort();
        await tx.done.catch(() => undefined);
        throw new StaleRunError(`Sample ${sample.ordinal + 1} of evaluation ${sample.evaluationId} is already stored.`);
      }
      const next: EvaluationRecord = { ...evaluation, completed: evaluation.completed + 1, updatedAt: sample.committedAt };
      await Promise.all([samples.add(sample), evaluations.put(next), tx.done]);
      return next;
    });
  }

  /** Finished samples of a sweep of generated tasks from position `from` on, in sweep order. */
  async listEvaluationSamples(evaluationId: string, from = 0): Promise<EvaluationSampleRecord[]> {
    const all = await this.read('the samples of the evaluation', () =>
      this.db.getAll('evaluationSamples', IDBKeyRange.bound([evaluationId, from], [evaluationId, Infinity])),
    );
    return all.filter((s): s is EvaluationSampleRecord => !('kind' in s));
  }

  /** Finished items of a dataset evaluation from position `from` on, in order. */
  async listDatasetSamples(evaluationId: string, from = 0): Promise<DatasetSampleRecord[]> {
    const all = await this.read('the samples of the evaluation', () =>
      this.db.getAll('evaluationSamples', IDBKeyRange.bound([evaluationId, from], [evaluationId, Infinity])),
    );
    return all.filter((s): s is DatasetSampleRecord => 'kind' in s && s.kind === 'dataset');
  }

  /** Stores a batch of dataset items in one transaction; a full disk stores none of them and says so. */
  putDatasetItems(items: readonly DatasetItemRecord[]): Promise<void> {
    return this.guard('the dataset file', async (failure) => {
      const tx = this.db.transaction('datasetItems', 'readwrite');
      failure.tx = tx;
      await Promise.all([...items.map((item) => tx.store.put(item)), tx.done]);
    });
  }

  getDatasetItem(evaluationId: string, ordinal: number): Promise<DatasetItemRecord | undefined> {
    return this.read('an item of the dataset file', () => this.db.get('datasetItems', [evaluationId, ordinal]));
  }

  /** Deletes an evaluation's dataset items (a file that could not be read whole leaves none behind). */
  deleteDatasetItems(evaluationId: string): Promise<void> {
    return this.guard("the deletion of the dataset file's items", async () => {
      await this.db.delete('datasetItems', IDBKeyRange.bound([evaluationId, 0], [evaluationId, Infinity]));
    });
  }

  /** Sweep positions of the finished samples: all a resume needs. */
  listEvaluationOrdinals(evaluationId: string): Promise<number[]> {
    return this.read('the samples of the evaluation', async () => {
      const keys = await this.db.getAllKeys('evaluationSamples', IDBKeyRange.bound([evaluationId, 0], [evaluationId, Infinity]));
      return keys.map(([, ordinal]) => ordinal);
    });
  }

  /** Models added by URL, oldest first. */
  listCustomModels(): Promise<CustomModelRecord[]> {
    return this.read('the models added by URL', async () => (await this.db.getAll('customModels')).sort((a, b) => a.addedAt - b.addedAt));
  }

  putCustomModel(model: CustomModelRecord): Promise<void> {
    return this.guard(`the model "${model.label}"`, async () => {
      await this.db.put('customModels', model);
    });
  }

  deleteCustomModel(id: string): Promise<void> {
    return this.guard('the deletion of the model', async () => {
      await this.db.delete('customModels', id);
    });
  }

  /** A model's measured speed on the GPU `adapter` names, if it was measured there. */
  getCalibration(modelId: string, adapter: string): Promise<CalibrationRecord | undefined> {
    return this.read("the model's measured speed", () => this.db.get('calibrations', [modelId, adapter]));
  }

  /** Every measured speed, on whatever GPU. */
  listCalibrations(): Promise<CalibrationRecord[]> {
    return this.read('the measured model speeds', () => this.db.getAll('calibrations'));
  }

  putCalibration(record: CalibrationRecord): Promise<void> {
    return this.guard("the model's measured speed", async () => {
      await this.db.put('calibrations', record);
    });
  }

  /** The kept copy of a MemAgent prompt file, by its path in that repository. */
  getPromptFile(path: string): Promise<PromptFileRecord | undefined> {
    return this.read('a kept prompt file', () => this.db.get('promptFiles', path));
  }

  listPromptFiles(): Promise<PromptFileRecord[]> {
    return this.read('the kept prompt files', () => this.db.getAll('promptFiles'));
  }

  /** Keeps a prompt file whose hash has been checked; it replaces any older copy of the same path. */
  putPromptFile(record: PromptFileRecord): Promise<void> {
    return this.guard('the prompt file', async (failure) => {
      const tx = this.db.transaction('promptFiles', 'readwrite');
      failure.tx = tx;
      await Promise.all([tx.store.put(record), tx.done]);
    });
  }

  /** Forgets a model's measured speeds on every GPU (a custom model removed: its id may name another model later). */
  deleteCalibrations(modelId: string): Promise<void> {
    return this.guard("the deletion of the model's measured speeds", async () => {
      // Adapters are strings, and arrays sort after every string: this range holds all of the model's keys.
      await this.db.delete('calibrations', IDBKeyRange.bound([modelId, ''], [modelId, []]));
    });
  }
}

