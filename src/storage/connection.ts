import type { DBSchema, IDBPDatabase } from 'idb';
import type { DatasetItemRecord, DatasetSampleRecord, EvaluationRecord, EvaluationSampleRecord } from './evaluation-schema';
import type { SpeedRecord, CustomModelRecord } from './model-schema';
import type { RunChunksRecord } from './run-chunks';
import type {
  CollectionRecord,
  DocumentRecord,
  FollowUpRecord,
  MemoryRecord,
  PromptFileRecord,
  RevisionRecord,
  RunProgress,
  SourcesRecord,
  StrippedText,
  TextPartRecord,
} from './schema';
import { connectionLost, type Failure, StorageError, translateStorageError } from './errors';

/** The object stores, their keys and values, as of the current version (db.ts). */
export interface MemagentDB extends DBSchema {
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
  calibrations: { key: [string, string]; value: SpeedRecord };
  runChunks: { key: string; value: RunChunksRecord };
  promptFiles: { key: string; value: PromptFileRecord };
  followUps: { key: [string, number]; value: FollowUpRecord };
  sources: { key: [string, number]; value: SourcesRecord };
  collections: { key: string; value: CollectionRecord };
}

/** A writer that lost a race (another tab wrote first): nothing of its write was kept. */
export class StaleRunError extends Error {
  override name = 'StaleRunError';
}

/** The document being imported was deleted meanwhile: its import stops, and nothing of it is left. */
export class DocumentGoneError extends Error {
  override name = 'DocumentGoneError';
}

/**
 * One open database and what every store module shares: the reason the
 * connection was lost, if it was, and the translation of failures into words.
 * The store modules (documents.ts, runs.ts, ...) extend it; Store in db.ts
 * gathers their methods.
 */
export class Connection {
  /** Why the connection is gone, once the browser closed it or a newer version of the app asked for it. */
  private lost: 'browser' | 'newer-version' | null = null;
  private readonly lostListeners = new Set<(error: StorageError) => void>();

  protected constructor(protected readonly db: IDBPDatabase<MemagentDB>) {}

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

  protected loseConnection(why: 'browser' | 'newer-version'): void {
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
  protected async guard<T>(what: string | Failure, work: (failure: Failure) => Promise<T>): Promise<T> {
    const failure: Failure = typeof what === 'string' ? { what } : { ...what };
    try {
      return await work(failure);
    } catch (e) {
      if (this.lost && !(e instanceof StorageError) && !(e instanceof StaleRunError) && !(e instanceof DocumentGoneError)) throw this.lostError(failure);
      throw translateStorageError(e, failure);
    }
  }

  protected read<T>(what: string, work: () => Promise<T>): Promise<T> {
    return this.guard({ what, reading: true }, work);
  }
}
