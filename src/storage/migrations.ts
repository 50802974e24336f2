import type { IDBPDatabase, IDBPTransaction, StoreNames } from 'idb';
import type { MemagentDB } from './connection';
import { splitRun } from './run-chunks';
import type { RevisionRecord, RunRecord, TextPartRecord } from './schema';

/**
 * Brings a database of any older version to the current one (DB_VERSION in
 * db.ts), inside the version-change transaction. Each step upgrades one
 * version; steps guarded by a store's name hold whatever came between.
 */
export async function upgrade(
  db: IDBPDatabase<MemagentDB>,
  oldVersion: number,
  transaction: IDBPTransaction<MemagentDB, StoreNames<MemagentDB>[], 'versionchange'>,
): Promise<void> {
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
  if (oldVersion < 9) {
    // Named sets of books, kept to be read together again.
    if (!db.objectStoreNames.contains('collections')) db.createObjectStore('collections', { keyPath: 'id' });
  }
  if (oldVersion < 10) {
    // Where each answer's facts came from, beside the run; older runs' are traced when they are shown.
    if (!db.objectStoreNames.contains('sources')) db.createObjectStore('sources', { keyPath: ['runId', 'answer'] });
  }
}
