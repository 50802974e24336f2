import type { Anchor } from '../core/anchors';
import type { DocumentRecord, StrippedText, TextPartRecord } from './schema';
import { cutParts, PART_CHARS, partCount, partsCovering, sliceParts } from '../core/text-parts';
import { Connection, DocumentGoneError } from './connection';
import { deleteRunIn, RUN_STORES } from './runs';

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

/** What the last batch of an import writes besides its parts: see Documents.finishDocument. */
export interface DocumentEnd {
  /** The record as the whole text makes it (its length, tokens, anchors, hash). */
  changes?: Partial<DocumentRecord>;
  /** What was cut from the text, kept with part 0. */
  stripped?: StrippedText;
}

/**
 * The transactions that write a document's record are on disk when they
 * complete ('strict'), not only handed to the operating system: a book the
 * page has shown as stored outlives a system crash or a power cut, not only a
 * crash of the tab or the browser. The batches in between are not: the book
 * is whole only once the last one, which is, has been written after them.
 */
const STORED: IDBTransactionOptions = { durability: 'strict' };

/** Books: their records and their texts in parts. Deleting one deletes its runs too. */
export class Documents extends Connection {
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
    const { anchors, ...plain } = doc;
    const record: DocumentRecord = { ...plain, partChars, ...(total > 1 ? { importing: true as const } : {}) };
    const existing = await this.beginDocument(record, parts.next().value ?? '', { stripped, anchors });
    if (existing) return existing;
    options.onUsable?.(record);
    options.onProgress?.(1 / total);
    let complete: DocumentRecord = record;
    for (let from = 1; from < total; from += perBatch) {
      const upto = Math.min(total, from + perBatch);
      const batch: string[] = [];
      for (let part = from; part < upto; part++) batch.push(parts.next().value!);
      if (upto === total) complete = await this.finishDocument(record, from, batch);
      else await this.writeParts(record, from, batch);
      options.onProgress?.(upto / total);
    }
    return complete;
  }

  /**
   * Commits a document's record with its first part in one transaction (the
   * document is then readable), or returns the document already stored with
   * this id. What was stripped from the text, and its anchors, are kept with
   * the first part. A record marked `importing` is finished by writeParts and
   * finishDocument.
   */
  async beginDocument(
    record: DocumentRecord,
    firstPart: string,
    withPart: { stripped?: StrippedText; anchors?: Anchor[] } = {},
  ): Promise<DocumentRecord | null> {
    const { stripped, anchors } = withPart;
    return this.guard(`"${record.name}"`, async (failure) => {
      // A record still importing is removed if it is lost with its parts: only a whole book is written to outlast a power cut.
      const tx = this.db.transaction(['documents', 'textParts'], 'readwrite', record.importing ? undefined : STORED);
      failure.tx = tx;
      const existing = await tx.objectStore('documents').get(record.id);
      if (existing) {
        await tx.done;
        return existing;
      }
      const part: TextPartRecord = { documentId: record.id, part: 0, text: firstPart };
      if (stripped) part.stripped = stripped;
      if (anchors?.length) part.anchors = anchors;
      await Promise.all([tx.objectStore('documents').put(record), tx.objectStore('textParts').put(part), tx.done]);
      return null;
    });
  }

  /** Writes parts `from`, `from + 1`, … of a document being imported (see beginDocument); a deleted one gets none. */
  writeParts(doc: Pick<DocumentRecord, 'id' | 'name'>, from: number, parts: readonly string[]): Promise<void> {
    return this.writeBatch(doc, from, parts, null);
  }

  /**
   * Writes a document's last parts and its record as `changes` make it, without
   * the `importing` mark, in one transaction that is on disk when it completes;
   * `stripped`, when given, is kept with part 0. Returns the record.
   */
  async finishDocument(
    doc: Pick<DocumentRecord, 'id' | 'name'>,
    from: number,
    parts: readonly string[],
    { changes = {}, stripped }: DocumentEnd = {},
  ): Promise<DocumentRecord> {
    let complete: DocumentRecord | undefined;
    await this.writeBatch(doc, from, parts, { changes, stripped, done: (d) => (complete = d) });
    return complete!;
  }

  private writeBatch(
    doc: Pick<DocumentRecord, 'id' | 'name'>,
    from: number,
    parts: readonly string[],
    last: { changes: Partial<DocumentRecord>; stripped?: StrippedText; done(doc: DocumentRecord): void } | null,
  ): Promise<void> {
    return this.guard(`"${doc.name}"`, async (failure) => {
      // Only the last batch holds the document's record: readers of it never wait for the parts before.
      const tx = this.db.transaction(last ? ['documents', 'textParts'] : ['textParts'], 'readwrite', last ? STORED : undefined);
      failure.tx = tx;
      const store = tx.objectStore('textParts');
      // A document deleted meanwhile (its parts go with it, part 0 first) gets no more parts: nothing of it may stay behind.
      const { anchors, ...changes } = last?.changes ?? {};
      const rewrite = last?.stripped || anchors?.length;
      const [first, now] = await Promise.all([
        rewrite ? store.get([doc.id, 0]) : store.getKey([doc.id, 0]),
        last ? tx.objectStore('documents').get(doc.id) : undefined,
      ]);
      if (first === undefined || (last && !now?.importing)) {
        tx.abort();
        // The abort rejects `done` on purpose; the refusal below is the error to report.
        await tx.done.catch(() => undefined);
        throw new DocumentGoneError(`"${doc.name}" was deleted while it was being stored.`);
      }
      const puts = parts.map((text, i) => store.put({ documentId: doc.id, part: from + i, text }));
      if (!last) return void (await Promise.all([...puts, tx.done]));
      if (rewrite) {
        const part = { ...(first as TextPartRecord) };
        if (last.stripped) part.stripped = last.stripped;
        if (anchors?.length) part.anchors = anchors;
        puts.push(store.put(part));
      }
      // The record as it is now (its exact token count may have landed meanwhile), without the mark.
      const { importing: _, ...done } = { ...now!, ...changes };
      last.done(done);
      await Promise.all([...puts, tx.objectStore('documents').put(done), tx.done]);
    });
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
      return sliceParts({ parts: parts.map((p) => p.text), first, partChars: doc.partChars }, from, to);
    });
  }

  /** The whole text of a document (see readText). */
  getText(id: string): Promise<string | undefined> {
    return this.readText(id);
  }

  /**
   * Deletes a document with its text and every run, revision and memory of it
   * (runs over a set that holds it too), and takes it out of the collections
   * that hold it, in one transaction.
   */
  deleteDocument(id: string): Promise<{ runs: number }> {
    return this.guard('the deletion of the book', async (failure) => {
      const tx = this.db.transaction(['documents', 'textParts', 'collections', ...RUN_STORES], 'readwrite');
      failure.tx = tx;
      // The index knows a set's first book only: the others are found among the runs over sets.
      const [own, all, collections] = await Promise.all([
        tx.objectStore('runs').index('byDocument').getAllKeys(id),
        tx.objectStore('runs').getAll(),
        tx.objectStore('collections').getAll(),
      ]);
      const runIds = new Set([...own, ...all.filter((r) => r.books?.some((b) => b.documentId === id)).map((r) => r.id)]);
      const now = Date.now();
      await Promise.all([
        tx.objectStore('documents').delete(id),
        tx.objectStore('textParts').delete(IDBKeyRange.bound([id, 0], [id, Infinity])),
        ...[...runIds].flatMap((runId) => deleteRunIn(tx, runId)),
        ...collections
          .filter((c) => c.documentIds.includes(id))
          .map((c) => tx.objectStore('collections').put({ ...c, documentIds: c.documentIds.filter((d) => d !== id), updatedAt: now })),
        tx.done,
      ]);
      return { runs: runIds.size };
    });
  }

  /** A document's chapters, headings and pages (see DocumentRecord.anchors); none for a document not stored. */
  getAnchors(id: string): Promise<Anchor[]> {
    return this.read('the chapters of this book', async () => {
      const tx = this.db.transaction(['documents', 'textParts']);
      const [part, doc] = await Promise.all([tx.objectStore('textParts').get([id, 0]), tx.objectStore('documents').get(id)]);
      return part?.anchors ?? doc?.anchors ?? [];
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
}
