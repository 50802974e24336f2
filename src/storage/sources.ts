import { Connection } from './connection';
import { RUN_ANSWER, type SourcesRecord } from './schema';

/** Every sources record of a run: the run's own answer's (RUN_ANSWER, -1) and each follow-up answer's. */
export function sourcesRange(runId: string): IDBKeyRange {
  return IDBKeyRange.bound([runId, RUN_ANSWER], [runId, Infinity]);
}

/** Where each answer of a run came from (see SourcesRecord), kept beside the run. */
export class Sources extends Connection {
  /**
   * Keeps an answer's sources, in one transaction with a check that the answer
   * is still there (the run finished and not deleted, the follow-up answer
   * stored): false, and nothing kept, where it is not.
   */
  putSources(record: SourcesRecord): Promise<boolean> {
    return this.guard('the sources of the answer', async (failure) => {
      const tx = this.db.transaction(['runs', 'followUps', 'sources'], 'readwrite');
      failure.tx = tx;
      const [run, followUp] = await Promise.all([
        tx.objectStore('runs').get(record.runId),
        record.answer === RUN_ANSWER ? undefined : tx.objectStore('followUps').get([record.runId, record.answer]),
      ]);
      const there = run?.status === 'done' && (record.answer === RUN_ANSWER ? run.answer !== undefined : followUp !== undefined);
      if (!there) {
        tx.abort();
        // The abort rejects `done` on purpose; the refusal below is the error to report.
        await tx.done.catch(() => undefined);
        return false;
      }
      await Promise.all([tx.objectStore('sources').put(record), tx.done]);
      return true;
    });
  }

  /** The sources of one answer (RUN_ANSWER: the run's own), if traced. */
  getSources(runId: string, answer: number): Promise<SourcesRecord | undefined> {
    return this.read('the sources of the answer', () => this.db.get('sources', [runId, answer]));
  }

  /** The sources of every answer of a run that has been traced. */
  listSources(runId: string): Promise<SourcesRecord[]> {
    return this.read('the sources of the answers', () => this.db.getAll('sources', sourcesRange(runId)));
  }
}
