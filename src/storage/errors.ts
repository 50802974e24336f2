/**
 * Storage failures in words a person can act on. IndexedDB reports its
 * failures as DOMExceptions whose messages name internals ("The serialized
 * keys and/or value are too large (size=…, max=…)"); every one that leaves
 * the Store is one of the errors below instead: what happened, what was not
 * saved, and what to do.
 */

/** A storage failure, translated. `kind` tells the runner how to react. */
export class StorageError extends Error {
  override name = 'StorageError';
  constructor(
    message: string,
    readonly kind: 'full' | 'too-large' | 'closed' | 'unreadable' | 'newer-version' | 'failed',
  ) {
    super(message);
  }
}

/** The browser refused to store more: the message says what to do. */
export class StorageFullError extends StorageError {
  override name = 'StorageFullError';
  constructor(message: string) {
    super(message, 'full');
  }
}

/** DOMException names that IndexedDB (and the Store's own connection) raise. */
const STORAGE_ERRORS = new Set([
  'QuotaExceededError',
  'UnknownError',
  'DataError',
  'InvalidStateError',
  'TransactionInactiveError',
  'AbortError',
  'VersionError',
  'NotReadableError',
  'DataCloneError',
  'ReadOnlyError',
  'NotFoundError',
  'ConstraintError',
]);

function nameOf(e: unknown): string {
  return (e as { name?: unknown } | null)?.name as string;
}

export interface Failure {
  /** What could not be saved or read, for a sentence: "revision 12", "“War and Peace”". */
  what: string;
  /** Reading rather than writing. */
  reading?: boolean;
  /** The transaction the failure came from: its own error says why a request was aborted. */
  tx?: { error: DOMException | null };
  /** The browser closed the database connection (site data cleared, browser shutting down). */
  closed?: boolean;
}

/**
 * The translated form of a storage failure, or `e` itself when it is not one
 * (the app's own errors pass through unchanged).
 */
export function translateStorageError(e: unknown, failure: Failure): unknown {
  if (e instanceof StorageError) return e;
  const cause = nameOf(e) === 'AbortError' && failure.tx?.error ? failure.tx.error : e;
  const name = nameOf(cause);
  if (!(cause instanceof Error || (typeof DOMException !== 'undefined' && cause instanceof DOMException)) || !STORAGE_ERRORS.has(name)) return e;
  const message = String((cause as Error).message ?? '');
  const { what } = failure;
  const verb = failure.reading ? 'read' : 'saved';
  if (name === 'QuotaExceededError') {
    return new StorageFullError(
      `This browser's storage for this site is full, so ${what} could not be saved. ` +
        'Free space: delete runs or books you no longer need, or make room on this device.',
    );
  }
  if (/too large|serializ/i.test(message) || name === 'DataCloneError') {
    return new StorageError(
      `${capitalise(what)} is larger than this browser lets a site store in one piece, so it was not saved and nothing was changed. ` +
        'Split the book into smaller files and add them one by one.',
      'too-large',
    );
  }
  // A connection the browser closes aborts what is in flight, with its reason ("Connection is closing because
  // of: Force close delete origin", Chromium) or with no error of its own.
  const closing = /clos/i.test(message) || (name === 'AbortError' && !failure.tx?.error);
  if (failure.closed || name === 'InvalidStateError' || name === 'TransactionInactiveError' || closing) {
    return new StorageError(
      `The browser closed this site's database (its data was cleared, or the browser is shutting down), so ${what} could not be ${verb}. ` +
        'Reload the page; everything saved before is kept unless the site data was cleared.',
      'closed',
    );
  }
  if (name === 'VersionError') {
    return new StorageError(
      `Another tab has this site's database open with a newer version of the app, so ${what} could not be ${verb}. Reload this page to update it.`,
      'newer-version',
    );
  }
  if (name === 'NotReadableError' || (failure.reading && name === 'UnknownError')) {
    return new StorageError(
      `${capitalise(what)} could not be read from this browser's storage: its files are missing or damaged. ` +
        'Delete the book from the Library and add the file again.',
      'unreadable',
    );
  }
  return new StorageError(
    `This browser's database failed, so ${what} could not be ${verb} (the device may be out of disk space, or the browser's storage damaged). ` +
      'Reload the page and try again; if it happens again, free space on this device or restart the browser.',
    'failed',
  );
}

/** What a page says when its connection to the database is gone for good. */
export function connectionLost(why: 'browser' | 'newer-version'): StorageError {
  return why === 'browser'
    ? new StorageError(
        "The browser closed this site's database (its data was cleared, or the browser is shutting down), so nothing more can be saved or shown. " +
          'Reload the page; everything saved before is kept unless the site data was cleared.',
        'closed',
      )
    : new StorageError(
        "Another tab opened this site's database with a newer version of the app, so this page can no longer save or show anything. Reload this page to update it.",
        'newer-version',
      );
}

function capitalise(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}
