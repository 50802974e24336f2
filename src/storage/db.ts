import { type DBSchema, type IDBPDatabase, openDB } from 'idb';
import type { DocumentRecord, MemoryRecord, RevisionRecord, RunProgress, RunRecord, RunStatus, StrippedText } from './schema';
import type { DatasetItemRecord, DatasetSampleRecord, EvaluationRecord, EvaluationSampleRecord, EvaluationStatus } from './evaluation-schema';
import type { CalibrationRecord, CustomModelRecord } from './model-schema';
import type { PromptFileRecord } from './schema';
import { modelKey, type StepSample } from '../core/estimate';

export * from './schema';
export * from './evaluation-schema';
export * from './model-schema';

export const DB_NAME = 'memagent';
// Version 5 belongs to the text-parts store; 6 adds prompt files; 7 dataset items (each step stands alone).
export const DB_VERSION = 7;

interface MemagentDB extends DBSchema {
  documents: { key: string; value: DocumentRecord };
  texts: { key: string; value: { id: string; text: string; stripped?: StrippedText } };
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
}

function packChunks(runId: string, chunks: RunRecord['chunks']): RunChunksRecord {
  const spans = new Uint32Array(chunks.length * 3);
  chunks.forEach((c, i) => spans.set([c.start, c.end, c.tokens], i * 3));
  return { runId, spans };
}

function unpackChunks(record: RunChunksRecord | undefined): RunRecord['chunks'] {
  const spans = record?.spans ?? new Uint32Array(0);
  const chunks: RunRecord['chunks'] = [];
  for (let i = 0; i + 2 < spans.length; i += 3) chunks.push({ start: spans[i]!, end: spans[i + 1]!, tokens: spans[i + 2]! });
  return chunks;
}

function splitRun(run: RunRecord): [RunProgress, RunChunksRecord] {
  const { chunks, ...stored } = run;
  return [stored, packChunks(run.id, chunks)];
}

function joinRun(run: RunProgress, chunks: RunChunksRecord | undefined): RunRecord {
  return { ...run, chunks: unpackChunks(chunks) };
}

export class StaleRunError extends Error {
  override name = 'StaleRunError';
}

/** The browser refused to store more: the message says what to do. */
export class StorageFullError extends Error {
  override name = 'StorageFullError';
}

function isQuotaError(e: unknown, tx?: IDBTransaction | { error: DOMException | null }): boolean {
  const name = (e as { name?: string } | null)?.name;
  return name === 'QuotaExceededError' || (name === 'AbortError' && tx?.error?.name === 'QuotaExceededError');
}

/**
 * Awaits a write transaction's requests and its end; a refusal for lack of space
 * becomes a StorageFullError saying what could not be saved. The transaction has
 * then rolled back, so nothing stored before is touched.
 */
async function written<T>(tx: { error: DOMException | null }, work: Promise<T>, what: string): Promise<T> {
  try {
    return await work;
  } catch (e) {
    if (!isQuotaError(e, tx)) throw e;
    throw new StorageFullError(
      `This browser's storage for this site is full, so ${what} could not be saved. ` +
        'Free space: delete runs or books you no longer need, or make room on this device.',
    );
  }
}

/** The one module that knows the IndexedDB schema; every read and write goes through here. */
export class Store {
  private constructor(private readonly db: IDBPDatabase<MemagentDB>) {}

  static async open(name = DB_NAME): Promise<Store> {
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
        if (oldVersion < 6 && !db.objectStoreNames.contains('promptFiles')) {
          // The MemAgent prompt files, kept for offline use (keyed by their path in the MemAgent repository).
          db.createObjectStore('promptFiles', { keyPath: 'path' });
        }
        // Version 7: dataset files' items, read by evaluations. Guarded by name, so the step holds whatever came between.
        if (!db.objectStoreNames.contains('datasetItems')) db.createObjectStore('datasetItems', { keyPath: ['evaluationId', 'ordinal'] });
      },
    });
    return new Store(db);
  }

  close(): void {
    this.db.close();
  }

  /**
   * Stores a document and its text together, or returns the one already stored
   * with the same id. All or nothing: when the browser's storage is full, nothing
   * is stored and a StorageFullError says so.
   */
  async addDocument(doc: DocumentRecord, text: string, stripped?: StrippedText): Promise<DocumentRecord> {
    const tx = this.db.transaction(['documents', 'texts'], 'readwrite');
    try {
      const existing = await tx.objectStore('documents').get(doc.id);
      if (existing) {
        await tx.done;
        return existing;
      }
      const record = stripped ? { id: doc.id, text, stripped } : { id: doc.id, text };
      await Promise.all([tx.objectStore('documents').put(doc), tx.objectStore('texts').put(record), tx.done]);
      return doc;
    } catch (e) {
      if (isQuotaError(e, tx)) {
        throw new StorageFullError(
          `"${doc.name}" does not fit in this browser's storage. Delete documents you no longer need from the Library, ` +
            'or free space for this site, then add it again.',
        );
      }
      throw e;
    }
  }

  /** Deletes a document with its text and every run, revision and memory of it, in one transaction. */
  async deleteDocument(id: string): Promise<{ runs: number }> {
    const tx = this.db.transaction(['documents', 'texts', 'runs', 'runChunks', 'revisions', 'memories'], 'readwrite');
    const runIds = await tx.objectStore('runs').index('byDocument').getAllKeys(id);
    await Promise.all([
      tx.objectStore('documents').delete(id),
      tx.objectStore('texts').delete(id),
      ...runIds.flatMap((runId) => {
        const range = IDBKeyRange.bound([runId, 0], [runId, Infinity]);
        return [
          tx.objectStore('runs').delete(runId),
          tx.objectStore('runChunks').delete(runId),
          tx.objectStore('revisions').delete(range),
          tx.objectStore('memories').delete(range),
        ];
      }),
      tx.done,
    ]);
    return { runs: runIds.length };
  }

  /** What was cut from a document's text on import (Project Gutenberg's header and footer), if anything. */
  async getStripped(id: string): Promise<StrippedText | undefined> {
    return (await this.db.get('texts', id))?.stripped;
  }

  getDocument(id: string): Promise<DocumentRecord | undefined> {
    return this.db.get('documents', id);
  }

  /** Replaces a document's estimated token count with the exact one; a deleted document stays deleted. */
  async setDocumentTokens(id: string, tokens: number): Promise<DocumentRecord | undefined> {
    const tx = this.db.transaction('documents', 'readwrite');
    const doc = await tx.store.get(id);
    if (!doc) {
      await tx.done;
      return undefined;
    }
    const { tokensEstimated: _, ...rest } = doc;
    const next: DocumentRecord = { ...rest, tokens };
    await written(tx, Promise.all([tx.store.put(next), tx.done]), 'the document');
    return next;
  }

  listDocuments(): Promise<DocumentRecord[]> {
    return this.db.getAll('documents');
  }

  async getText(id: string): Promise<string | undefined> {
    return (await this.db.get('texts', id))?.text;
  }

  async createRun(run: RunRecord): Promise<void> {
    const tx = this.db.transaction(['runs', 'runChunks'], 'readwrite');
    const [stored, chunks] = splitRun(run);
    await written(tx, Promise.all([tx.objectStore('runs').add(stored), tx.objectStore('runChunks').put(chunks), tx.done]), 'the new run');
  }

  /** Deletes a run with its revisions and memories, in one transaction; its document stays. */
  async deleteRun(runId: string): Promise<void> {
    const tx = this.db.transaction(['runs', 'runChunks', 'revisions', 'memories'], 'readwrite');
    const range = IDBKeyRange.bound([runId, 0], [runId, Infinity]);
    await Promise.all([
      tx.objectStore('runs').delete(runId),
      tx.objectStore('runChunks').delete(runId),
      tx.objectStore('revisions').delete(range),
      tx.objectStore('memories').delete(range),
      tx.done,
    ]);
  }

  async getRun(id: string): Promise<RunRecord | undefined> {
    const tx = this.db.transaction(['runs', 'runChunks']);
    const [run, chunks] = await Promise.all([tx.objectStore('runs').get(id), tx.objectStore('runChunks').get(id), tx.done]);
    return run && joinRun(run, chunks);
  }

  /** Runs, newest first. */
  async listRuns(): Promise<RunRecord[]> {
    const tx = this.db.transaction(['runs', 'runChunks']);
    const [runs, chunks] = await Promise.all([tx.objectStore('runs').getAll(), tx.objectStore('runChunks').getAll(), tx.done]);
    const byRun = new Map(chunks.map((c) => [c.runId, c]));
    return runs.map((r) => joinRun(r, byRun.get(r.id))).sort((a, b) => b.createdAt - a.createdAt);
  }

  /**
   * Commits one revision and its memory and advances the run in a single
   * transaction. Refuses a revision that is not the run's next chunk, so that no
   * chunk is stored twice even if two writers race.
   */
  async commitRevision(revision: RevisionRecord, memory: string, chunks?: RunRecord['chunks']): Promise<RunProgress> {
    // The chunk list is in the transaction only when it changes: a reader of it never holds up a commit.
    const tx = this.db.transaction(chunks ? ['runs', 'runChunks', 'revisions', 'memories'] : ['runs', 'revisions', 'memories'], 'readwrite');
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
    await written(
      tx,
      Promise.all([
        tx.objectStore('revisions').add(revision),
        tx.objectStore('memories').add({ runId: revision.runId, index: revision.index, memory }),
        runs.put(next),
        // A skim that follows the memory adds chunks ahead of the reader, with the revision that found them.
        chunks && tx.objectStore('runChunks').put(packChunks(revision.runId, chunks)),
        tx.done,
      ]),
      `revision ${revision.index + 1}`,
    );
    return next;
  }

  /** Stores an imported run with its revisions and memories, all or nothing. */
  async importRun(run: RunRecord, revisions: readonly RevisionRecord[], memories: readonly MemoryRecord[]): Promise<void> {
    const tx = this.db.transaction(['runs', 'runChunks', 'revisions', 'memories'], 'readwrite');
    const [stored, chunks] = splitRun(run);
    await Promise.all([
      tx.objectStore('runs').add(stored),
      tx.objectStore('runChunks').put(chunks),
      ...revisions.map((r) => tx.objectStore('revisions').add(r)),
      ...memories.map((m) => tx.objectStore('memories').add(m)),
      tx.done,
    ]);
  }

  /** Applies `change` to a run inside one transaction and returns the result. */
  /** Applies `change` to a run inside one transaction and returns the run as it is now (its chunks only where `change` set them). */
  async updateRun(id: string, change: (run: RunProgress) => Partial<RunRecord>): Promise<RunProgress> {
    const tx = this.db.transaction(['runs', 'runChunks'], 'readwrite');
    const run = await tx.objectStore('runs').get(id);
    if (!run) {
      tx.abort();
      await tx.done.catch(() => undefined);
      throw new Error(`No run with id ${id}.`);
    }
    const { chunks, ...rest } = change(run);
    const next: RunProgress = { ...run, ...rest, updatedAt: Date.now() };
    await written(
      tx,
      Promise.all([tx.objectStore('runs').put(next), chunks && tx.objectStore('runChunks').put(packChunks(id, chunks)), tx.done]),
      'the run',
    );
    return next;
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
  async recentSteps(engineId: string, model?: string, limit = 50): Promise<StepSample[]> {
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
  }

  /** Revisions of a run from chunk `index` on: what a view that has the earlier ones lacks. */
  listRevisionsFrom(runId: string, index: number): Promise<RevisionRecord[]> {
    return this.db.getAll('revisions', IDBKeyRange.bound([runId, index], [runId, Infinity]));
  }

  getRevision(runId: string, index: number): Promise<RevisionRecord | undefined> {
    return this.db.get('revisions', [runId, index]);
  }

  /** The memory written at chunk `index`. */
  async getMemory(runId: string, index: number): Promise<string | undefined> {
    return (await this.db.get('memories', [runId, index]))?.memory;
  }

  /** Every memory of a run, in order (for export). */
  async listMemories(runId: string): Promise<string[]> {
    return (await this.db.getAll('memories', IDBKeyRange.bound([runId, 0], [runId, Infinity]))).map((m) => m.memory);
  }

  /**
   * Indexes of the revisions whose memory contains `needle` (case-insensitive),
   * read with a cursor so that no more than one memory is held at a time.
   */
  async searchMemories(runId: string, needle: string): Promise<number[]> {
    const want = needle.toLocaleLowerCase();
    const hits: number[] = [];
    let cursor = await this.db.transaction('memories').store.openCursor(IDBKeyRange.bound([runId, 0], [runId, Infinity]));
    while (cursor) {
      if (cursor.value.memory.toLocaleLowerCase().includes(want)) hits.push(cursor.value.index);
      cursor = await cursor.continue();
    }
    return hits;
  }

  async createEvaluation(evaluation: EvaluationRecord): Promise<void> {
    await this.db.add('evaluations', evaluation);
  }

  getEvaluation(id: string): Promise<EvaluationRecord | undefined> {
    return this.db.get('evaluations', id);
  }

  /** Evaluations, newest first. */
  async listEvaluations(): Promise<EvaluationRecord[]> {
    return (await this.db.getAll('evaluations')).sort((a, b) => b.createdAt - a.createdAt);
  }

  /** Applies `change` to an evaluation inside one transaction and returns the result. */
  async updateEvaluation(id: string, change: (evaluation: EvaluationRecord) => Partial<EvaluationRecord>): Promise<EvaluationRecord> {
    const tx = this.db.transaction('evaluations', 'readwrite');
    const evaluation = await tx.store.get(id);
    if (!evaluation) {
      tx.abort();
      await tx.done.catch(() => undefined);
      throw new Error(`No evaluation with id ${id}.`);
    }
    const next = { ...evaluation, ...change(evaluation), updatedAt: Date.now() };
    await Promise.all([tx.store.put(next), tx.done]);
    return next;
  }

  setEvaluationStatus(id: string, status: EvaluationStatus, error?: string): Promise<EvaluationRecord> {
    return this.updateEvaluation(id, () => ({ status, error }));
  }

  /**
   * Stores one finished sample and counts it in its evaluation, in one
   * transaction. Refuses a sample already stored, so that two writers never
   * count one twice.
   */
  async commitEvaluationSample(sample: EvaluationSampleRecord | DatasetSampleRecord): Promise<EvaluationRecord> {
    const tx = this.db.transaction(['evaluations', 'evaluationSamples'], 'readwrite');
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
  }

  /** Finished samples of a sweep of generated tasks from position `from` on, in sweep order. */
  async listEvaluationSamples(evaluationId: string, from = 0): Promise<EvaluationSampleRecord[]> {
    return (await this.db.getAll('evaluationSamples', IDBKeyRange.bound([evaluationId, from], [evaluationId, Infinity]))).filter(
      (s): s is EvaluationSampleRecord => !('kind' in s),
    );
  }

  /** Finished items of a dataset evaluation from position `from` on, in order. */
  async listDatasetSamples(evaluationId: string, from = 0): Promise<DatasetSampleRecord[]> {
    return (await this.db.getAll('evaluationSamples', IDBKeyRange.bound([evaluationId, from], [evaluationId, Infinity]))).filter(
      (s): s is DatasetSampleRecord => 'kind' in s && s.kind === 'dataset',
    );
  }

  /** Stores a batch of dataset items in one transaction; a full disk stores none of them and says so. */
  async putDatasetItems(items: readonly DatasetItemRecord[]): Promise<void> {
    const tx = this.db.transaction('datasetItems', 'readwrite');
    await written(tx, Promise.all([...items.map((item) => tx.store.put(item)), tx.done]), 'the dataset file');
  }

  getDatasetItem(evaluationId: string, ordinal: number): Promise<DatasetItemRecord | undefined> {
    return this.db.get('datasetItems', [evaluationId, ordinal]);
  }

  /** Deletes an evaluation's dataset items (a file that could not be read whole leaves none behind). */
  async deleteDatasetItems(evaluationId: string): Promise<void> {
    await this.db.delete('datasetItems', IDBKeyRange.bound([evaluationId, 0], [evaluationId, Infinity]));
  }

  /** Sweep positions of the finished samples: all a resume needs. */
  async listEvaluationOrdinals(evaluationId: string): Promise<number[]> {
    const keys = await this.db.getAllKeys('evaluationSamples', IDBKeyRange.bound([evaluationId, 0], [evaluationId, Infinity]));
    return keys.map(([, ordinal]) => ordinal);
  }

  /** Models added by URL, oldest first. */
  async listCustomModels(): Promise<CustomModelRecord[]> {
    return (await this.db.getAll('customModels')).sort((a, b) => a.addedAt - b.addedAt);
  }

  async putCustomModel(model: CustomModelRecord): Promise<void> {
    await this.db.put('customModels', model);
  }

  async deleteCustomModel(id: string): Promise<void> {
    await this.db.delete('customModels', id);
  }

  /** A model's measured speed on the GPU `adapter` names, if it was measured there. */
  getCalibration(modelId: string, adapter: string): Promise<CalibrationRecord | undefined> {
    return this.db.get('calibrations', [modelId, adapter]);
  }

  /** Every measured speed, on whatever GPU. */
  listCalibrations(): Promise<CalibrationRecord[]> {
    return this.db.getAll('calibrations');
  }

  async putCalibration(record: CalibrationRecord): Promise<void> {
    await this.db.put('calibrations', record);
  }

  /** The kept copy of a MemAgent prompt file, by its path in that repository. */
  getPromptFile(path: string): Promise<PromptFileRecord | undefined> {
    return this.db.get('promptFiles', path);
  }

  listPromptFiles(): Promise<PromptFileRecord[]> {
    return this.db.getAll('promptFiles');
  }

  /** Keeps a prompt file whose hash has been checked; it replaces any older copy of the same path. */
  async putPromptFile(record: PromptFileRecord): Promise<void> {
    const tx = this.db.transaction('promptFiles', 'readwrite');
    await written(tx, Promise.all([tx.store.put(record), tx.done]), 'the prompt file');
  }

  /** Forgets a model's measured speeds on every GPU (a custom model removed: its id may name another model later). */
  async deleteCalibrations(modelId: string): Promise<void> {
    // Adapters are strings, and arrays sort after every string: this range holds all of the model's keys.
    await this.db.delete('calibrations', IDBKeyRange.bound([modelId, ''], [modelId, []]));
  }
}
