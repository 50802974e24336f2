import type { DatasetItemRecord, DatasetSampleRecord, EvaluationRecord, EvaluationSampleRecord, EvaluationStatus } from './evaluation-schema';
import { Connection, StaleRunError } from './connection';

/** Evaluation sweeps, their finished samples, and the dataset items they read. */
export class Evaluations extends Connection {
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
        // The abort rejects `done` on purpose; the refusal below is the error to report.
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
      const [evaluation, existing] = await Promise.all([evaluations.get(sample.evaluationId), samples.getKey([sample.evaluationId, sample.ordinal])]);
      if (!evaluation || existing !== undefined) {
        tx.abort();
        // The abort rejects `done` on purpose; the refusal below is the error to report.
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

  /** Deletes an evaluation with its finished samples and its dataset items, in one transaction. */
  deleteEvaluation(id: string): Promise<void> {
    return this.guard('the deletion of the evaluation', async (failure) => {
      const tx = this.db.transaction(['evaluations', 'evaluationSamples', 'datasetItems'], 'readwrite');
      failure.tx = tx;
      await Promise.all([
        tx.objectStore('evaluations').delete(id),
        tx.objectStore('evaluationSamples').delete(IDBKeyRange.bound([id, 0], [id, Infinity])),
        tx.objectStore('datasetItems').delete(IDBKeyRange.bound([id, 0], [id, Infinity])),
        tx.done,
      ]);
    });
  }

  /** Sweep positions of the finished samples: all a resume needs. */
  listEvaluationOrdinals(evaluationId: string): Promise<number[]> {
    return this.read('the samples of the evaluation', async () => {
      const keys = await this.db.getAllKeys('evaluationSamples', IDBKeyRange.bound([evaluationId, 0], [evaluationId, Infinity]));
      return keys.map(([, ordinal]) => ordinal);
    });
  }
}
