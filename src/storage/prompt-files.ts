import type { PromptFileRecord } from './schema';
import { Connection } from './connection';

/** The MemAgent prompt files kept for offline use. */
export class PromptFiles extends Connection {
  /** The kept copy of a MemAgent prompt file, by its path in that repository. */
  getPromptFile(path: string): Promise<PromptFileRecord | undefined> {
    return this.read('a kept prompt file', () => this.db.get('promptFiles', path));
  }

  listPromptFiles(): Promise<PromptFileRecord[]> {
    return this.read('the kept prompt files', () => this.db.getAll('promptFiles'));
  }

  /** Keeps a prompt file whose hash has been checked; it replaces any older copy of the same path. */
  putPromptFile(record: PromptFileRecord): Promise<void> {
    return this.guard('the prompt file', async (failure) => {
      const tx = this.db.transaction('promptFiles', 'readwrite');
      failure.tx = tx;
      await Promise.all([tx.store.put(record), tx.done]);
    });
  }
}
