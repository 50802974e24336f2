import type { RunEvent } from '../agent/events';
import { RequestError } from '../jobs/request-error';
import type { CollectionRecord, Store } from '../storage/db';

export interface CollectionsDeps {
  store: Store;
  publish(event: RunEvent): void;
  newId?(): string;
}

/** The longest name a collection may have. */
export const MAX_COLLECTION_NAME = 120;

/**
 * Named sets of books, kept to be read together again: a collection names its
 * books in reading order. Deleting one leaves its books; every tab hears of a
 * change.
 */
export class BookCollections {
  constructor(private readonly deps: CollectionsDeps) {}

  /** Keeps the books `documentIds`, in that order, under `name`; with `id`, replaces that collection. Returns it as stored. */
  async save(name: string, documentIds: readonly string[], id?: string): Promise<CollectionRecord> {
    const { store } = this.deps;
    const trimmed = name.replace(/\s+/g, ' ').trim();
    if (!trimmed) throw new RequestError('Give the collection a name, so that you can find it again.');
    if (trimmed.length > MAX_COLLECTION_NAME) throw new RequestError(`A collection's name may be ${MAX_COLLECTION_NAME} characters long at most.`);
    if (documentIds.length < 2) throw new RequestError('A collection holds at least two books: choose another one.');
    if (new Set(documentIds).size !== documentIds.length) throw new RequestError('A book is chosen twice: a collection names each book once.');
    const docs = await Promise.all(documentIds.map((d) => store.getDocument(d)));
    if (docs.some((d) => !d)) throw new RequestError('A book of this collection is no longer stored. Choose the books again.');
    const all = await store.listCollections();
    const same = all.find((c) => c.name.toLowerCase() === trimmed.toLowerCase() && c.id !== id);
    if (same) throw new RequestError(`There is a collection named "${same.name}" already: choose another name, or delete that one first.`);
    const before = id ? all.find((c) => c.id === id) : undefined;
    if (id && !before) throw new RequestError('That collection is no longer stored.');
    const now = Date.now();
    const record: CollectionRecord = {
      id: before?.id ?? this.deps.newId?.() ?? crypto.randomUUID(),
      name: trimmed,
      documentIds: [...documentIds],
      createdAt: before?.createdAt ?? now,
      updatedAt: now,
    };
    await store.putCollection(record);
    this.deps.publish({ type: 'collection', collectionId: record.id });
    return record;
  }

  /** Forgets a collection; its books, and the runs over them, stay. */
  async delete(id: string): Promise<void> {
    await this.deps.store.deleteCollection(id);
    this.deps.publish({ type: 'collection', collectionId: id });
  }
}
