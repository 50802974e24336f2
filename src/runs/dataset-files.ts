import { DatasetError, readDataset } from '../eval/dataset';
import type { DatasetItemRecord, EvaluationRecord, Store } from '../storage/db';
import { RequestError } from '../jobs/request-error';

/** The dataset files of an evaluation, to store as its items. */
export interface DatasetUpload {
  /** The evaluation's id. */
  id: string;
  files: readonly File[];
  /** The most items kept of each file; all of them where absent. */
  limit?: number;
  /** Hears the bytes read so far, of how many. */
  onRead?(bytes: number, total: number): void;
}

/**
 * Stores the items of every dataset file of an evaluation, read in pieces so
 * that files of hundreds of megabytes fit, a few megabytes a transaction. A
 * file that cannot be read whole leaves nothing behind and says what is wrong
 * with it.
 */
export async function storeDatasetFiles(
  store: Pick<Store, 'putDatasetItems' | 'deleteDatasetItems'>,
  { id, files: datasetFiles, limit, onRead }: DatasetUpload,
): Promise<{ files: NonNullable<EvaluationRecord['dataset']>['files']; items: number }> {
  const files: NonNullable<EvaluationRecord['dataset']>['files'] = [];
  let ordinal = 0;
  const totalBytes = datasetFiles.reduce((n, f) => n + f.size, 0);
  let bytesBefore = 0;
  try {
    for (const file of datasetFiles) {
      let batch: DatasetItemRecord[] = [];
      let chars = 0;
      let items = 0;
      let numDocs: number | null = null;
      let reportedAt = 0;
      const read = (bytes: number) => {
        // A few reports a second, not one per block read.
        if (Date.now() - reportedAt < 100) return;
        reportedAt = Date.now();
        onRead?.(bytesBefore + bytes, totalBytes);
      };
      for await (const item of readDataset(textPieces(file, read), file.name)) {
        if (limit !== undefined && items >= limit) break;
        batch.push({ ...item, evaluationId: id, ordinal: ordinal++, file: file.name });
        numDocs ??= item.numDocs;
        items++;
        chars += item.context.length;
        // A few megabytes a transaction: long contexts are written without holding a whole file.
        if (chars > 8_000_000 || batch.length >= 64) {
          await store.putDatasetItems(batch);
          batch = [];
          chars = 0;
        }
      }
      if (batch.length) await store.putDatasetItems(batch);
      files.push({ name: file.name, numDocs, items });
      bytesBefore += file.size;
      onRead?.(bytesBefore, totalBytes);
    }
  } catch (e) {
    // Best effort: the read's own failure is what is thrown; items left behind belong to no stored sweep.
    await store.deleteDatasetItems(id).catch(() => undefined);
    if (e instanceof DatasetError) throw new RequestError(e.message);
    throw e;
  }
  return { files, items: ordinal };
}

/** A file's text in pieces, decoded as UTF-8 (a byte-order mark kept for the reader to skip); `onBytes` hears the bytes read so far. */
async function* textPieces(file: Blob, onBytes?: (bytes: number) => void): AsyncGenerator<string> {
  const reader = file.stream().getReader();
  const decoder = new TextDecoder('utf-8', { ignoreBOM: true });
  let bytes = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      bytes += value.byteLength;
      onBytes?.(bytes);
      yield decoder.decode(value, { stream: true });
    }
  } finally {
    reader.releaseLock();
  }
  const rest = decoder.decode();
  if (rest) yield rest;
}
