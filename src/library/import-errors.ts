/*
 * What an import that cannot go on says: a book the storage has no room for,
 * refused before anything is written, and a failure while storing, in words.
 */
import { DocumentGoneError, StorageError, StorageFullError } from '../storage/db';
import { RequestError } from '../jobs/request-error';

/** Refuses, before writing anything, a text that the browser's storage has no room for. */
export function checkRoom(name: string, bytes: number, estimate: { usage?: number; quota?: number } | undefined): void {
  if (!estimate?.quota) return;
  const free = estimate.quota - (estimate.usage ?? 0);
  if (bytes > free) {
    const mb = (n: number) => `${Math.max(0, n / 1024 / 1024).toFixed(1)} MB`;
    throw new StorageFullError(
      `"${name}" needs about ${mb(bytes)} of storage, but this browser allows this site only ${mb(free)} more. ` +
        'Delete documents you no longer need from the Library, or free space for this site, then add it again.',
    );
  }
}

/** The error an import that failed while storing reports; `kept` says what became of what it had written. */
export function importError(name: string, e: unknown, kept: string): unknown {
  if (e instanceof DocumentGoneError) return new RequestError(`"${name}" was deleted before it was completely stored.`);
  if (e instanceof StorageFullError) {
    return new StorageFullError(
      `"${name}" does not fit in this browser's storage. Delete documents you no longer need from the Library, ` +
        `or free space for this site, then add it again.${kept}`,
    );
  }
  if (e instanceof StorageError) return new StorageError(`${e.message}${kept}`, e.kind);
  return e;
}
