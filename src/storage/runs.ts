import type { FollowUpRecord, MemoryRecord, RevisionRecord, RunProgress, RunRecord, RunStatus, SourcesRecord } from './schema';
import type { IDBPTransaction, StoreNames } from 'idb';
import { Connection, type MemagentDB, StaleRunError } from './connection';
import { joinRun, packChunks, splitRun } from './run-chunks';
import { sourcesRange } from './sources';

/** A run brought in from an export, with all that was written for it. */
export interface ImportedRun {
  run: RunRecord;
  revisions: readonly RevisionRecord[];
  memories: readonly MemoryRecord[];
  followUps?: readonly FollowUpRecord[];
  sources?: readonly SourcesRecord[];
}

/** The stores that hold a run and what was written for it. */
export const RUN_STORES = ['runs', 'runChunks', 'revisions', 'memories', 'followUps', 'sources'] as const;

/** The deletions of a run and of all that was written for it, in a transaction over (at least) RUN_STORES. */
export function deleteRunIn(tx: IDBPTransaction<MemagentDB, ArrayLike<StoreNames<MemagentDB>>, 'readwrite'>, runId: string): Promise<unknown>[] {
  const range = IDBKeyRange.bound([runId, 0], [runId, Infinity]);
  return [
    tx.objectStore('runs').delete(runId),
    tx.objectStore('runChunks').delete(runId),
    tx.objectStore('revisions').delete(range),
    tx.objectStore('memories').delete(range),
    tx.objectStore('followUps').delete(range),
    tx.objectStore('sources').delete(sourcesRange(runId)),
  ];
}

/** Runs: their records and chunk lists, and each revision committed with the run's progress. */
export class Runs extends Connection {
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
      const tx = this.db.transaction(RUN_STORES, 'readwrite');
      failure.tx = tx;
      await Promise.all([...deleteRunIn(tx, runId), tx.done]);
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
   * chunk is stored twice even if two writers race. `infmem`: an InfMem
   * read's planner state, committed with the memory it goes with.
   */
  commitRevision(revision: RevisionRecord, memory: string, chunks?: RunRecord['chunks'], infmem?: RunRecord['infmem']): Promise<RunProgress> {
    return this.guard(`revision ${revision.index + 1}`, async (failure) => {
      // The chunk list is in the transaction only when it changes: a reader of it never holds up a commit.
      const tx = this.db.transaction(chunks ? ['runs', 'runChunks', 'revisions', 'memories'] : ['runs', 'revisions', 'memories'], 'readwrite');
      failure.tx = tx;
      const runs = tx.objectStore('runs');
      const run = await runs.get(revision.runId);
      if (!run || run.nextChunk !== revision.index) {
        tx.abort();
        // The abort rejects `done` on purpose; the refusal below is the error to report.
        await tx.done.catch(() => undefined);
        throw new StaleRunError(`Revision ${revision.index + 1} of run ${revision.runId} is not the next one (${run ? run.nextChunk + 1 : 'no run'}).`);
      }
      const next: RunProgress = { ...run, nextChunk: revision.index + 1, memory, updatedAt: revision.committedAt, ...(infmem && { infmem }) };
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

  /** Stores an imported run with its revisions, memories, follow-up answers and their sources, all or nothing. */
  importRun({ run, revisions, memories, followUps = [], sources = [] }: ImportedRun): Promise<void> {
    return this.guard('the imported run', async (failure) => {
      const tx = this.db.transaction(RUN_STORES, 'readwrite');
      failure.tx = tx;
      const [stored, chunks] = splitRun(run);
      await Promise.all([
        tx.objectStore('runs').add(stored),
        tx.objectStore('runChunks').put(chunks),
        ...revisions.map((r) => tx.objectStore('revisions').add(r)),
        ...memories.map((m) => tx.objectStore('memories').add(m)),
        ...followUps.map((f) => tx.objectStore('followUps').add(f)),
        ...sources.map((s) => tx.objectStore('sources').put(s)),
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
        // The abort rejects `done` on purpose; the refusal below is the error to report.
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
}
