import { openDB } from 'idb';
import { Connection, type MemagentDB } from './connection';
import { Collections } from './collections';
import { Documents } from './documents';
import { translateStorageError } from './errors';
import { Evaluations } from './evaluations';
import { upgrade } from './migrations';
import { Models } from './models';
import { PromptFiles } from './prompt-files';
import { Revisions } from './revisions';
import { Runs } from './runs';
import { Sources } from './sources';

export * from './schema';
export * from './evaluation-schema';
export * from './model-schema';
export { StorageError, StorageFullError } from './errors';
export { DocumentGoneError, StaleRunError } from './connection';
export type { StoreTextOptions } from './documents';

export const DB_NAME = 'memagent';
// Version 5 stores texts in parts; 6 adds prompt files; 7 dataset items; 8 follow-up answers; 9 collections; 10 answers' sources (each step stands alone).
export const DB_VERSION = 10;

/**
 * The one way into the database: every read and write of every store, each
 * written in the module of its store (documents.ts, runs.ts, revisions.ts,
 * sources.ts, evaluations.ts, models.ts, prompt-files.ts, collections.ts) and gathered here.
 */
// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging -- the loop below copies every part's methods onto Store.prototype
export interface Store extends Documents, Runs, Revisions, Sources, Evaluations, Models, PromptFiles, Collections {}

// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging -- see the interface above
export class Store extends Connection {
  static async open(name = DB_NAME): Promise<Store> {
    let store: Store | undefined;
    const db = await openDB<MemagentDB>(name, DB_VERSION, {
      upgrade: (db, oldVersion, _newVersion, transaction) => upgrade(db, oldVersion, transaction),
      // A tab with a newer version of the app needs this connection closed to upgrade the database.
      blocking(_current, _wanted, event) {
        (event.target as IDBDatabase).close();
        store?.loseConnection('newer-version');
      },
      // The browser closed the connection: site data cleared, or the browser shutting down.
      terminated() {
        store?.loseConnection('browser');
      },
    }).catch((e: unknown) => {
      throw translateStorageError(e, { what: "this site's saved books and runs", reading: true });
    });
    store = new Store(db);
    return store;
  }
}

// Each store module's methods become the Store's (they share its connection).
for (const part of [Documents, Runs, Revisions, Sources, Evaluations, Models, PromptFiles, Collections]) {
  for (const name of Object.getOwnPropertyNames(part.prototype)) {
    if (name !== 'constructor') Object.defineProperty(Store.prototype, name, Object.getOwnPropertyDescriptor(part.prototype, name)!);
  }
}
