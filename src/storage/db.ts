import { type DBSchema, type IDBPDatabase, openDB } from 'idb';
import type { DocumentRecord, RevisionRecord, RunRecord, RunStatus } from './schema';

export * from './schema';

export const DB_NAME = 'memagent';
export const DB_VERSION = 1;

interface MemagentDB extends DBSchema {
  documents: { key: string; value: DocumentRecord };
  texts: { key: string; value: { id: string; text: string } };
  runs: { key: string; value: RunRecord; indexes: { byDocument: string } };
  revisions: { key: [string, number]; value: RevisionRecord };
}

export class StaleRunError extends Error {
  override name = 'StaleRunError';
}

/** The one module that knows the IndexedDB schema; every read and write goes through here. */
export class Store {
  private constructor(private readonly db: IDBPDatabase<MemagentDB>) {}

  static async open(name = DB_NAME): Promise<Store> {
    const db = await openDB<MemagentDB>(name, DB_VERSION, {
      upgrade(db, oldVersion) {
        // Each step upgrades one version, so any older database reaches the current one.
        if (oldVersion < 1) {
          db.createObjectStore('documents', { keyPath: 'id' });
          db.createObjectStore('texts', { keyPath: 'id' });
          db.createObjectStore('runs', { keyPath: 'id' }).createIndex('byDocument', 'documentId');
          db.createObjectStore('revisions', { keyPath: ['runId', 'index'] });
        }
      },
    });
    return new Store(db);
  }

  close(): void {
    this.db.close();
  }

  /** Stores a document and its text together, or returns the one already stored with the same id. */
  async addDocument(doc: DocumentRecord, text: string): Promise<DocumentRecord> {
    const tx = this.db.transaction(['documents', 'texts'], 'readwrite');
    const existing = await tx.objectStore('documents').get(doc.id);
    if (existing) {
      await tx.done;
      return existing;
    }
    await Promise.all([tx.objectStore('documents').put(doc), tx.objectStore('texts').put({ id: doc.id, text }), tx.done]);
    return doc;
  }

  getDocument(id: string): Promise<DocumentRecord | undefined> {
    return this.db.get('documents', id);
  }

  listDocuments(): Promise<DocumentRecord[]> {
    return this.db.getAll('documents');
  }

  async getText(id: string): Promise<string | undefined> {
    return (await this.db.get('texts', id))?.text;
  }

  async createRun(run: RunRecord): Promise<void> {
    await this.db.add('runs', run);
  }

  getRun(id: string): Promise<RunRecord | undefined> {
    return this.db.get('runs', id);
  }

  /** Runs, newest first. */
  async listRuns(): Promise<RunRecord[]> {
    return (await this.db.getAll('runs')).sort((a, b) => b.createdAt - a.createdAt);
  }

  /**
   * Commits one revision and advances the run in a single transaction. Refuses a
   * revision that is not the run's next chunk, so that no chunk is stored twice
   * even if two writers race.
   */
  async commitRevision(revision: RevisionRecord): Promise<RunRecord> {
    const tx = this.db.transaction(['runs', 'revisions'], 'readwrite');
    const runs = tx.objectStore('runs');
    const run = await runs.get(revision.runId);
    if (!run || run.nextChunk !== revision.index) {
      tx.abort();
      await tx.done.catch(() => undefined);
      throw new StaleRunError(
        `Revision ${revision.index + 1} of run ${revision.runId} is not the next one (${run ? run.nextChunk + 1 : 'no run'}).`,
      );
    }
    const next: RunRecord = {
      ...run,
      nextChunk: revision.index + 1,
      memory: revision.memory,
      updatedAt: revision.committedAt,
    };
    await Promise.all([tx.objectStore('revisions').add(revision), runs.put(next), tx.done]);
    return next;
  }

  /** Applies `change` to a run inside one transaction and returns the result. */
  async updateRun(id: string, change: (run: RunRecord) => Partial<RunRecord>): Promise<RunRecord> {
    const tx = this.db.transaction('runs', 'readwrite');
    const run = await tx.store.get(id);
    if (!run) {
      tx.abort();
      await tx.done.catch(() => undefined);
      throw new Error(`No run with id ${id}.`);
    }
    const next = { ...run, ...change(run), updatedAt: Date.now() };
    await Promise.all([tx.store.put(next), tx.done]);
    return next;
  }

  setRunStatus(id: string, status: RunStatus, error?: string): Promise<RunRecord> {
    return this.updateRun(id, () => ({ status, error }));
  }

  /** Every revision of a run, in order. */
  listRevisions(runId: string): Promise<RevisionRecord[]> {
    return this.listRevisionsFrom(runId, 0);
  }

  /** Revisions of a run from chunk `index` on: what a view that has the earlier ones lacks. */
  listRevisionsFrom(runId: string, index: number): Promise<RevisionRecord[]> {
    return this.db.getAll('revisions', IDBKeyRange.bound([runId, index], [runId, Infinity]));
  }

  getRevision(runId: string, index: number): Promise<RevisionRecord | undefined> {
    return this.db.get('revisions', [runId, index]);
  }
}
