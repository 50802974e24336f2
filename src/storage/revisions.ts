import type { FollowUpRecord, RevisionRecord } from './schema';
import { modelKey, type ReadTiming, type StepSample } from '../core/estimate';
import { fold } from '../core/fold';
import { Connection, StaleRunError } from './connection';

/** What a run wrote: its revisions, their memories, and the follow-up answers to its final memory. */
export class Revisions extends Connection {
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

  /**
   * The times of an engine's most recent finished reads (with `model`, of that
   * model): when each started and ended and each chunk's step, for what an
   * estimate adds to the steps (see besideSteps).
   */
  recentReads(engineId: string, model?: string, limit = 9): Promise<ReadTiming[]> {
    return this.read('the timings of past runs', async () => {
      const out: ReadTiming[] = [];
      const runs = (await this.db.getAll('runs')).sort((a, b) => b.createdAt - a.createdAt);
      for (const run of runs) {
        if (out.length >= limit) break;
        if (run.engineId !== engineId || run.status !== 'done' || run.finishedAt === undefined || run.nextChunk === 0) continue;
        if (model !== undefined && modelKey(run.engineConfig) !== model) continue;
        const steps = (await this.listRevisions(run.id)).map((r) => ({ ms: r.ms, committedAt: r.committedAt }));
        out.push({ startedAt: run.createdAt, finishedAt: run.finishedAt, steps });
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
   * Indexes of the revisions whose memory contains `needle`, compared as a reader
   * expects (core/fold: case, accents and width folded), read with a cursor so
   * that no more than one memory is held at a time.
   */
  searchMemories(runId: string, needle: string): Promise<number[]> {
    return this.read('the memories of the run', async () => {
      const want = fold(needle);
      const hits: number[] = [];
      let cursor = await this.db.transaction('memories').store.openCursor(IDBKeyRange.bound([runId, 0], [runId, Infinity]));
      while (cursor) {
        if (fold(cursor.value.memory).includes(want)) hits.push(cursor.value.index);
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
        // The abort rejects `done` on purpose; the refusal below is the error to report.
        await tx.done.catch(() => undefined);
        throw new StaleRunError(
          run
            ? 'The read is no longer finished, so its final memory may change: the answer was not kept.'
            : 'The run was deleted while the answer was written: nothing was kept.',
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
}
