import type { CollectionRecord } from './schema';
import { Connection } from './connection';

/** Named sets of books (Collections in the Library). */
export class Collections extends Connection {
  /** Every collection, oldest first. */
  listCollections(): Promise<CollectionRecord[]> {
    return this.read('the collections', async () => (await this.db.getAll('collections')).sort((a, b) => a.createdAt - b.createdAt));
  }

  getCollection(id: string): Promise<CollectionRecord | undefined> {
    return this.read('the collection', () => this.db.get('collections', id));
  }

  /** Keeps a collection, replacing one with the same id. */
  putCollection(record: CollectionRecord): Promise<void> {
    return this.guard(`the collection "${record.name}"`, async (failure) => {
      const tx = this.db.transaction('collections', 'readwrite');
      failure.tx = tx;
      await Promise.all([tx.store.put(record), tx.done]);
    });
  }

  /** Forgets a collection; its books stay. */
  deleteCollection(id: string): Promise<void> {
    return this.guard('the deletion of the collection', async (failure) => {
      const tx = this.db.transaction('collections', 'readwrite');
      failure.tx = tx;
      await Promise.all([tx.store.delete(id), tx.done]);
    });
  }
}
